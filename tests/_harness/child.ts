/**
 * Services in child processes: the environment a child gets (only what it needs; nothing of this
 * process leaks in), spawning with captured output, the port a child listens on, and waiting until
 * an address answers 200. A child service is given PORT=0 and the kernel's choice is read back
 * (`listeningPorts`): a port probed free here and opened again by the child could be taken in
 * between by any other process of a parallel run.
 */
import { TEST_PASSWORD, TEST_SECRET } from "./app.ts";

/** The repository root, the working directory of every child. */
export const ROOT = new URL("../../", import.meta.url).pathname;

/** Output kept per stream: the tail, enough for a failure message. */
const KEEP_CHARS = 64_000;

/** `pid` and the deno processes below it (`deno task start` runs the service as its child). */
async function denoTree(pid: number): Promise<number[]> {
  const deno = await Deno.realPath(Deno.execPath());
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    const tasks = await Array.fromAsync(Deno.readDir(`/proc/${found[i]}/task`)).catch(() => []);
    for (const task of tasks) {
      const children = await Deno.readTextFile(`/proc/${found[i]}/task/${task.name}/children`)
        .catch(() => "");
      for (const child of children.split(" ").filter(Boolean).map(Number)) {
        const exe = await Deno.readLink(`/proc/${child}/exe`).catch(() => "");
        if (exe === deno) found.push(child);
      }
    }
  }
  return found;
}

/**
 * The TCP ports process `pid`, or a deno process it started, listens on (IPv4 and IPv6), from
 * /proc: the sockets among their open files that the kernel lists in state LISTEN. Empty once it
 * has exited.
 */
export async function listeningPorts(pid: number): Promise<number[]> {
  const inodes = new Set<string>();
  for (const p of await denoTree(pid)) {
    try {
      for await (const fd of Deno.readDir(`/proc/${p}/fd`)) {
        const target = await Deno.readLink(`/proc/${p}/fd/${fd.name}`).catch(() => "");
        const m = /^socket:\[(\d+)\]$/.exec(target);
        if (m) inodes.add(m[1]);
      }
    } catch {
      if (p === pid) return [];
    }
  }
  const ports = new Set<number>();
  for (const table of ["tcp", "tcp6"]) {
    const text = await Deno.readTextFile(`/proc/${pid}/net/${table}`).catch(() => "");
    for (const line of text.split("\n").slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is HEX_IP:HEX_PORT; state 0A is LISTEN; field 9 is the inode.
      if (f[3] === "0A" && inodes.has(f[9])) ports.add(parseInt(f[1].split(":")[1], 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}

/** What a child needs from this environment to find deno's cache; nothing else leaks in. */
export function hostEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ["PATH", "HOME", "DENO_DIR", "NPM_CONFIG_REGISTRY"]) {
    const value = Deno.env.get(key);
    if (value) env[key] = value;
  }
  return env;
}

/** The database and bucket settings of a child on `db` and `s3`. */
export function storageEnv(
  db: { url: string },
  s3: { endpoint: string; settings: { bucket: string } },
): Record<string, string> {
  return {
    DATABASE_URL: db.url,
    S3_BUCKET: s3.settings.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY_ID: "S3RVER",
    S3_SECRET_ACCESS_KEY: "S3RVER",
  };
}

/**
 * The environment of a service on `db` and `s3`: the test credentials, loopback, PORT=0 (any
 * port: `spawnService` reads back the one it got).
 */
export function childEnv(
  db: { url: string },
  s3: { endpoint: string; settings: { bucket: string } },
  extra: Record<string, string> = {},
): Record<string, string> {
  return {
    ...hostEnv(),
    ...storageEnv(db, s3),
    ADMIN_PASSWORD: TEST_PASSWORD,
    JWT_SECRET: TEST_SECRET,
    HOST: "127.0.0.1",
    PORT: "0",
    THUMBNAIL_WORKERS: "1",
    LOG_LEVEL: "warn",
    ...extra,
  };
}

/** `deno run` with the permissions of `deno task start`, on `script` (main.ts by default). */
export async function startArgs(script = "main.ts"): Promise<string[]> {
  const { tasks } = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const flags = String(tasks.start).split(" ").filter((a) => a.startsWith("--allow-"));
  return ["run", ...flags, script];
}

/** A child process with its output captured. */
export interface Child {
  pid: number;
  /** Resolves when the process ends. */
  status: Promise<Deno.CommandStatus>;
  /** True while the process runs. */
  alive(): boolean;
  /** The tail of its standard output and standard error. */
  stdout(): string;
  stderr(): string;
  /** Both, for failure messages. */
  output(): string;
  /** Resident set size in kB (VmRSS), or null once it is gone. */
  rssKb(): Promise<number | null>;
  kill(signal?: Deno.Signal): void;
  /** SIGTERM, SIGKILL after `graceMs`; resolves with the exit status. */
  stop(graceMs?: number): Promise<Deno.CommandStatus>;
}

/** Options of `spawnChild`. */
export interface ChildOptions {
  /** The executable; deno by default. */
  command?: string;
  /** Its arguments, e.g. `["run", "-A", "main.ts"]` or `["task", "start"]` for deno. */
  args: string[];
  /** The whole environment of the child (see `hostEnv`). */
  env: Record<string, string>;
  /** Called with every complete line the child writes, from either stream. */
  onLine?: (line: string) => void;
}

/** Runs deno (or `command`) with `args` in the repository root. */
export function spawnChild(opts: ChildOptions): Child {
  const child = new Deno.Command(opts.command ?? Deno.execPath(), {
    args: opts.args,
    cwd: ROOT,
    clearEnv: true,
    env: { NO_COLOR: "1", ...opts.env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const text = { out: "", err: "", both: "" };
  const drain = async (stream: ReadableStream<Uint8Array>, key: "out" | "err") => {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const bytes of stream) {
      const chunk = decoder.decode(bytes, { stream: true });
      text[key] = (text[key] + chunk).slice(-KEEP_CHARS);
      text.both = (text.both + chunk).slice(-KEEP_CHARS);
      if (!opts.onLine) continue;
      const lines = (partial + chunk).split("\n");
      partial = lines.pop()!;
      for (const line of lines) opts.onLine(line);
    }
    if (partial && opts.onLine) opts.onLine(partial);
  };
  const drained = Promise.all([drain(child.stdout, "out"), drain(child.stderr, "err")])
    .catch(() => {});
  let running = true;
  // Resolves once the output is read too, so that a caller sees every line the child wrote
  // (within a bound: a grandchild may hold the pipes open after the child is gone).
  const status = child.status.then(async (s) => {
    running = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([drained, new Promise((r) => timer = setTimeout(r, 2_000))]);
    clearTimeout(timer);
    return s;
  });
  const kill = (signal: Deno.Signal = "SIGTERM") => {
    try {
      child.kill(signal);
    } catch { /* it has exited already */ }
  };
  return {
    pid: child.pid,
    status,
    alive: () => running,
    stdout: () => text.out,
    stderr: () => text.err,
    output: () => text.both,
    rssKb: async () => {
      try {
        const s = await Deno.readTextFile(`/proc/${child.pid}/status`);
        const m = /^VmRSS:\s+(\d+) kB/m.exec(s);
        return m ? Number(m[1]) : null;
      } catch {
        return null;
      }
    },
    kill,
    stop: async (graceMs = 10_000) => {
      if (running) kill("SIGTERM");
      const timer = setTimeout(() => kill("SIGKILL"), graceMs);
      try {
        return await status;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/** Options of `waitReady`. */
export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * Polls `url` until it answers 200; returns the milliseconds that took. Throws with the child's
 * output when the child exits first or the time is up (the child is then left to the caller).
 */
export async function waitReady(child: Child, url: string, opts: WaitOptions = {}) {
  const { timeoutMs = 60_000, intervalMs = 100 } = opts;
  const started = performance.now();
  for (;;) {
    if (!child.alive()) throw new Error(`exited before ${url} answered 200:\n${child.output()}`);
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(5_000) });
      await res.body?.cancel();
      if (res.status === 200) return performance.now() - started;
    } catch { /* not listening yet, or too slow this time */ }
    if (performance.now() - started > timeoutMs) {
      throw new Error(`${url} did not answer 200 within ${timeoutMs} ms:\n${child.output()}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** A service in a child process, listening on loopback. */
export interface ChildService extends Child {
  port: number;
  base: string;
}

/**
 * The port `child` listens on, once it listens on exactly one; throws with its output when it
 * exits first or `timeoutMs` passes (hang guard, like waitReady's).
 */
export async function boundPort(child: Child, timeoutMs = 60_000): Promise<number> {
  const started = performance.now();
  for (;;) {
    const ports = await listeningPorts(child.pid);
    if (ports.length === 1) return ports[0];
    if (ports.length > 1) throw new Error(`listens on ${ports.join(", ")}, not one port`);
    if (!child.alive()) throw new Error(`exited before it listened:\n${child.output()}`);
    if (performance.now() - started > timeoutMs) {
      throw new Error(`did not listen within ${timeoutMs} ms:\n${child.output()}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Spawns deno with `args` and `env` and waits until health answers 200; a child that does not get
 * there is killed. With PORT 0 (childEnv's) the port is the one the child bound (`boundPort`);
 * a fixed PORT is used as given (a replica restarted where nginx expects it).
 */
export async function spawnService(
  args: string[],
  env: Record<string, string>,
  opts: WaitOptions & Pick<ChildOptions, "onLine" | "command"> = {},
): Promise<ChildService> {
  const child = spawnChild({ args, env, onLine: opts.onLine, command: opts.command });
  try {
    const port = Number(env.PORT) || await boundPort(child, opts.timeoutMs);
    const base = `http://127.0.0.1:${port}`;
    await waitReady(child, `${base}/api/v1/health`, opts);
    return { ...child, port, base };
  } catch (e) {
    await child.stop(1_000);
    throw e;
  }
}
