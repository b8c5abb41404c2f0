/**
 * s3rver in a child process of its own, so that a test can freeze it (SIGSTOP: connections are
 * still accepted by the kernel, and nothing answers) and thaw it (SIGCONT), and so that a
 * benchmark's service and load generator never pay for it (bench/_lib/service.ts). Run as a
 * script it is that child: s3rver on S3_PORT (0: any) over the folder S3_DIR, printing
 * `{"port": n}` once listening, until SIGTERM.
 */
import { newS3rver, s3rverBucket, type TestS3 } from "./s3.ts";

const BUCKET = "board";
const TEST_LOCK = new URL("../deno.lock", import.meta.url).pathname;
/** Hang guard: how long the child may take to print its port. */
const READY_MS = 60_000;
/** Hang guard: how long the child may take to exit on SIGTERM before it is killed. */
const STOP_MS = 10_000;

/** A TestS3 in a child process, with the signals of an outage. */
export interface ChildS3 extends TestS3 {
  pid(): number;
  /** SIGSTOP: the server stops answering (and reading) mid-request. */
  freeze(): void;
  /** SIGCONT. */
  thaw(): void;
  /** How the current child ended (after `stop`: by its SIGTERM handler, or killed at STOP_MS). */
  status(): Promise<Deno.CommandStatus>;
}

async function spawn(port: number, dir: string) {
  const child = new Deno.Command(Deno.execPath(), {
    // s3rver is a test-only package: it is in the tests' lockfile, not the service's.
    args: ["run", "-A", `--lock=${TEST_LOCK}`, new URL(import.meta.url).pathname],
    env: { S3_PORT: String(port), S3_DIR: dir },
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const timer = setTimeout(() => child.kill("SIGKILL"), READY_MS);
  try {
    while (!out.includes("\n")) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`s3rver exited before it listened (${READY_MS} ms bound): ${out}`);
      out += value;
    }
  } finally {
    clearTimeout(timer);
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return { child, port: JSON.parse(out).port as number };
}

/** Starts s3rver in a child process; the store's requests fail after `timeoutMs` of silence. */
export async function startS3Process(opts: { timeoutMs?: number } = {}): Promise<ChildS3> {
  const dir = await Deno.makeTempDir({ prefix: "board-s3-" });
  let { child, port } = await spawn(0, dir);
  let running = true;
  const stop = async () => {
    if (!running) return;
    running = false;
    child.kill("SIGCONT"); // a frozen process cannot act on SIGTERM
    child.kill("SIGTERM");
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_MS);
    try {
      await child.status;
    } finally {
      clearTimeout(timer);
    }
  };
  return {
    ...s3rverBucket(port, BUCKET, opts.timeoutMs),
    port,
    dir,
    pid: () => child.pid,
    freeze: () => child.kill("SIGSTOP"),
    thaw: () => child.kill("SIGCONT"),
    status: () => child.status,
    stop,
    restart: async () => {
      ({ child, port } = await spawn(port, dir));
      running = true;
    },
  };
}

if (import.meta.main) {
  const server = newS3rver(Number(Deno.env.get("S3_PORT") ?? 0), Deno.env.get("S3_DIR")!, BUCKET);
  const { port } = await server.run();
  console.log(JSON.stringify({ port }));
  Deno.addSignalListener("SIGTERM", async () => {
    // As in startS3: keep-alive connections of the parent's store must not hold close().
    (server as unknown as { httpServer?: { closeAllConnections?(): void } }).httpServer
      ?.closeAllConnections?.();
    await server.close().catch(() => {});
    Deno.exit(0);
  });
}
