/**
 * The service under benchmark in a child process (`bench/serve.ts`), s3rver in another, and
 * signing in as the bench admin.
 *
 * @module
 */
import { S3Store } from "../../adapters/storage/s3.ts";
import { spawnReady, tempDirs } from "./processes.ts";

/** s3rver in its own process. */
export interface S3Process {
  endpoint: string;
  port: number;
  bucket: string;
  pid: number;
  stop(): Promise<void>;
}

/** A store on s3rver's bucket, with the credentials s3rver accepts. */
export function s3rverStore(s3: { endpoint: string; bucket: string }, timeoutMs?: number): S3Store {
  return new S3Store({
    timeoutMs,
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    region: "us-east-1",
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    forcePathStyle: true,
  });
}

/** Starts s3rver (`bench/s3_server.ts`) in a child process on a loopback port. */
export async function startS3Process(): Promise<S3Process> {
  const child = await spawnReady<{ port: number; bucket: string; dir: string }>(
    "bench/s3_server.ts",
    {},
  );
  const { port, bucket, dir } = child.info;
  tempDirs.add(dir);
  const stop = async () => {
    await child.stop();
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    tempDirs.delete(dir);
  };
  return { endpoint: `http://127.0.0.1:${port}`, port, bucket, pid: child.pid, stop };
}

/** The bench admin's password and token secret. */
export const BENCH_PASSWORD = "bench password that nobody uses";
export const BENCH_SECRET = "bench-secret-that-is-at-least-32-bytes-long!!";

/** The service under test in a child process. */
export interface ServiceProcess {
  base: string;
  pid: number;
  /** Its thumbnail workers (THUMBNAIL_WORKERS). */
  workers: number;
  stop(): Promise<void>;
}

/**
 * Starts `bench/serve.ts` on `databaseUrl`, with s3rver when given, else the filesystem store
 * under a temporary DATA_DIR. `env` adds or overrides configuration.
 */
export async function startService(
  databaseUrl: string,
  s3: S3Process | null,
  env: Record<string, string> = {},
): Promise<ServiceProcess> {
  const dataDir = await Deno.makeTempDir({ prefix: "bench-data-" });
  tempDirs.add(dataDir);
  // BENCH_SERVE_FLAGS: extra deno flags for the service (diagnostics, e.g. V8 GC tracing).
  const flags = Deno.env.get("BENCH_SERVE_FLAGS")?.split(" ").filter(Boolean) ?? [];
  // BENCH_SERVE_SCRIPT: another entry (e.g. another checkout's copy, for before/after runs).
  const child = await spawnReady<{ port: number; workers: number }>(
    Deno.env.get("BENCH_SERVE_SCRIPT") ?? "bench/serve.ts",
    {
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      ADMIN_USERNAME: "admin",
      ADMIN_PASSWORD: BENCH_PASSWORD,
      JWT_SECRET: BENCH_SECRET,
      LOG_LEVEL: "warn",
      HOST: "127.0.0.1",
      PORT: "0",
      ...(s3
        ? {
          S3_BUCKET: s3.bucket,
          S3_ENDPOINT: s3.endpoint,
          S3_ACCESS_KEY_ID: "S3RVER",
          S3_SECRET_ACCESS_KEY: "S3RVER",
        }
        : {}),
      ...env,
    },
    60_000,
    flags,
  );
  return {
    base: `http://127.0.0.1:${child.info.port}`,
    pid: child.pid,
    workers: child.info.workers,
    stop: async () => {
      await child.stop();
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
      tempDirs.delete(dataDir);
    },
  };
}

/** Signs in as the bench admin; returns the Authorization header. */
export async function signIn(base: string): Promise<Record<string, string>> {
  const res = await fetch(`${base}/api/v1/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: BENCH_PASSWORD }),
  });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const { access_token } = await res.json();
  return { authorization: `Bearer ${access_token}` };
}
