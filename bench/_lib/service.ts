/**
 * The service under benchmark in a child process (`bench/serve.ts`), s3rver in another, and
 * signing in as the bench admin.
 *
 * @module
 */
import { disposeS3 } from "../../tests/_harness/s3.ts";
import { type ChildS3, startS3Process } from "../../tests/_harness/s3_process.ts";
import { spawnReady, stopAtEnd, tempDirs } from "./processes.ts";

/**
 * s3rver in a child process (tests/_harness/s3_process.ts, the tests' own), stopped and its
 * folder removed by `stop()` or, at the latest, when the benchmark ends (`stopAllChildren`).
 */
export async function startBenchS3(): Promise<ChildS3> {
  const s3 = await startS3Process();
  return { ...s3, stop: stopAtEnd(() => disposeS3(s3)) };
}

/** The bench admin's password and token secret. */
export const BENCH_PASSWORD = "bench password that nobody uses";
export const BENCH_SECRET = "bench-secret-that-is-at-least-32-bytes-long!!";

/** The service under test in a child process. */
export interface BenchService {
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
export async function spawnBenchService(
  databaseUrl: string,
  s3: Pick<ChildS3, "endpoint" | "bucket"> | null,
  env: Record<string, string> = {},
): Promise<BenchService> {
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
