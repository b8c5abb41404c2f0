/**
 * Child processes of the benchmarks: spawned with `deno run -A`, ready once they print one JSON
 * line, and all stopped (with their temporary folders removed) when a benchmark ends.
 *
 * Every benchmark runs the service in its own process (`bench/serve.ts`) and drives it from the
 * bench process over loopback only, so the load generator never shares an event loop with it.
 *
 * @module
 */

/** The repository root. */
export const ROOT = new URL("../../", import.meta.url);

/**
 * The lockfile of every process a benchmark starts: the tests' (a superset of the service's), so
 * a benchmark runs the very versions the service and the tests run (docs/architecture.md, "Two
 * lockfiles"); with no lockfile, Deno resolved the newest of each range instead.
 */
export const LOCK_FLAG = `--lock=${new URL("tests/deno.lock", ROOT).pathname}`;

interface Child {
  process: Deno.ChildProcess;
  name: string;
}

const children = new Set<Child>();

/** Temporary folders of services started here, removed when they stop. */
export const tempDirs = new Set<string>();

/** Stops of processes started elsewhere (s3rver), run once by `stopAllChildren` at the latest. */
const stops = new Set<() => Promise<void>>();

/** `stop`, run once: by the returned function or by `stopAllChildren`, whichever comes first. */
export function stopAtEnd(stop: () => Promise<void>): () => Promise<void> {
  const once = async () => {
    if (stops.delete(once)) await stop();
  };
  stops.add(once);
  return once;
}

/**
 * Kills every child started through this module (SIGTERM, then SIGKILL after 5 s) and runs the
 * stops given to `stopAtEnd`.
 */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...[...children].map((c) => stopChild(c)), ...[...stops].map((s) => s())]);
  for (const dir of tempDirs) await Deno.remove(dir, { recursive: true }).catch(() => {});
  tempDirs.clear();
}

async function stopChild(c: Child): Promise<void> {
  if (!children.has(c)) return;
  children.delete(c);
  try {
    c.process.kill("SIGTERM");
  } catch { /* already gone */ }
  const killer = setTimeout(() => {
    try {
      c.process.kill("SIGKILL");
    } catch { /* already gone */ }
  }, 5000);
  await c.process.status.catch(() => {});
  clearTimeout(killer);
}

/** A child process that printed one JSON line on stdout when ready. */
export interface ReadyChild<T> {
  pid: number;
  info: T;
  /** Settles when the process exits. */
  exited: Promise<Deno.CommandStatus>;
  stop(): Promise<void>;
}

/**
 * Spawns `deno run -A <script>` with `env`, waits (up to `timeoutMs`) for its first stdout line
 * and parses it as JSON. stderr goes to ours; later stdout lines are drained.
 */
export async function spawnReady<T>(
  script: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
  denoFlags: string[] = [],
): Promise<ReadyChild<T>> {
  const process = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", LOCK_FLAG, ...denoFlags, new URL(script, ROOT).pathname],
    env,
    stdin: "null",
    stdout: "piped",
    stderr: "inherit",
    cwd: ROOT.pathname,
  }).spawn();
  const child: Child = { process, name: script };
  children.add(child);
  const reader = process.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const first = new Promise<string>((resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${script} not ready in ${timeoutMs} ms`)),
      timeoutMs,
    );
    (async () => {
      while (true) {
        const { value, done } = await reader.read();
        if (done) return reject(new Error(`${script} exited before it was ready`));
        buffered += value;
        // The first line that is a JSON object (V8 tracing flags may print before it).
        for (let nl = buffered.indexOf("\n"); nl >= 0; nl = buffered.indexOf("\n")) {
          const line = buffered.slice(0, nl);
          buffered = buffered.slice(nl + 1);
          if (line.startsWith("{")) return resolve(line);
          console.error(`[${script}] ${line}`);
        }
      }
    })().catch(reject);
  });
  let line: string;
  try {
    line = await first;
  } catch (e) {
    await stopChild(child);
    throw e;
  } finally {
    clearTimeout(timer);
  }
  // Keep draining so the child never blocks on a full pipe; what it prints goes to stderr.
  (async () => {
    const out = new TextEncoder();
    if (buffered) await Deno.stderr.write(out.encode(buffered));
    for (let r = await reader.read(); !r.done; r = await reader.read()) {
      await Deno.stderr.write(out.encode(r.value));
    }
  })().catch(() => {});
  return {
    pid: process.pid,
    info: JSON.parse(line) as T,
    exited: process.status,
    stop: () => stopChild(child),
  };
}
