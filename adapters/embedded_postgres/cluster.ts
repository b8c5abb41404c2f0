/**
 * One PostgreSQL cluster run from the embedded binaries: initdb on first use, the postmaster as a
 * child in its own session (Ctrl-C reaches the service, which stops it after draining), a bounded
 * wait for readiness, and a bounded stop. A postmaster left running by a process that was killed
 * is stopped before a new one starts on the same folder.
 */
import { dirname, join } from "node:path";
import { StartupError } from "../startup.ts";
import { type Binaries, binaries, exists, oneLine, type RunAs, spawnAs } from "./binaries.ts";

/** How long initdb and the postmaster's start may take before the start fails. */
const START_TIMEOUT_MS = 120_000;
/** How long a fast shutdown may take before the postmaster is made to quit at once. */
const STOP_GRACE_MS = 30_000;
/** Output kept for an error message. */
const KEEP_CHARS = 8_000;
const READY = "database system is ready to accept connections";

/** A running cluster. */
export interface Cluster {
  port: number;
  /** The URL of `database` on it, as the superuser. */
  url(database: string): string;
  /** Fast shutdown, bounded; resolves once the postmaster is gone. */
  stop(): Promise<void>;
}

/** What `startCluster` needs. */
export interface ClusterOptions {
  /** The cluster's folder (PGDATA); initialised when it holds no cluster yet. */
  dir: string;
  /** The superuser `postgres`'s password, set when the cluster is initialised. */
  password: string;
  /** Who runs it (see `postgresUser`); undefined: this process's user. */
  runAs?: RunAs;
  /** A throwaway cluster: nothing is flushed to disk (a crash of the machine may lose it). */
  scratch?: boolean;
}

/** Starts the cluster in `opts.dir`, initialising it first when it is new. */
export async function startCluster(opts: ClusterOptions): Promise<Cluster> {
  const bins = await binaries(opts.runAs);
  if (!(await exists(join(opts.dir, "PG_VERSION")))) await initialize(bins, opts);
  await stopLeftover(opts.dir);
  for (let attempt = 1;; attempt++) {
    const port = freePort();
    try {
      return await startPostmaster(bins, opts, port);
    } catch (e) {
      // Another process took the port between our probe and the postmaster's bind: try again.
      if (!(e instanceof PortTaken) || attempt >= 3) throw e;
    }
  }
}

/** The postmaster could not bind its port (taken since it was found free). */
class PortTaken extends StartupError {}

/**
 * Makes the cluster's folder for `runAs`: a folder made here is handed to that user; one that
 * already existed is never chowned (it may be anything a link or a person put there) and must
 * be that user's already (embedded_test.ts "an existing folder is not handed to postgres").
 */
async function prepareDir(dir: string, runAs: RunAs | undefined): Promise<void> {
  let made = true;
  try {
    await Deno.mkdir(dirname(dir), { recursive: true });
    await Deno.mkdir(dir, { mode: 0o700 });
  } catch (e) {
    if (!(e instanceof Deno.errors.AlreadyExists)) {
      throw new StartupError(`The embedded PostgreSQL cannot make ${dir}: ${oneLine(e)}`);
    }
    made = false;
  }
  if (!runAs) return;
  if (made) return await Deno.chown(dir, runAs.uid, runAs.gid);
  const info = await Deno.lstat(dir);
  if (!info.isDirectory || info.uid !== runAs.uid) {
    throw new StartupError(
      `${dir} already exists and is not a folder of the user "${runAs.name}" that runs the ` +
        `embedded PostgreSQL; it is never handed over: remove it (if it is yours and empty) or ` +
        `set DATA_DIR to another folder.`,
    );
  }
}

async function initialize(bins: Binaries, opts: ClusterOptions): Promise<void> {
  const { dir, runAs } = opts;
  await prepareDir(dir, runAs);
  // Beside the cluster: the postgres user can enter its parent, not necessarily TMPDIR.
  const pwfile = await Deno.makeTempFile({ dir: dirname(dir), prefix: ".pw-" });
  try {
    await Deno.writeTextFile(pwfile, `${opts.password}\n`, { mode: 0o600 });
    if (runAs) await Deno.chown(pwfile, runAs.uid, runAs.gid);
    const out = await new Deno.Command(bins.initdb, {
      args: [
        `--pgdata=${dir}`,
        "--username=postgres",
        `--pwfile=${pwfile}`,
        "--auth=scram-sha-256",
        // The same text rules on every machine: UTF-8, and case mapping for all of Unicode.
        "--encoding=UTF8",
        "--locale-provider=builtin",
        "--builtin-locale=C.UTF-8",
        "--locale=C",
        "--no-instructions",
        ...(opts.scratch ? ["--no-sync"] : []),
      ],
      ...spawnAs(runAs),
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(START_TIMEOUT_MS),
    }).output().catch((e) => ({ success: false, stdout: new Uint8Array(), stderr: e }));
    if (!out.success) {
      // initdb removes what it wrote; an empty folder left behind is initialised next time.
      const why = out.stderr instanceof Uint8Array
        ? lastError(new TextDecoder().decode(out.stderr))
        : oneLine(out.stderr);
      throw new StartupError(
        `The embedded PostgreSQL could not initialise ${dir}: ${why}. Fix that, or set ` +
          `DATABASE_URL to a PostgreSQL server.`,
      );
    }
  } finally {
    await Deno.remove(pwfile).catch(() => {});
  }
}

async function startPostmaster(bins: Binaries, opts: ClusterOptions, port: number) {
  const child = new Deno.Command(bins.postgres, {
    args: [
      "-D",
      opts.dir,
      "-p",
      String(port),
      "-c",
      "listen_addresses=127.0.0.1",
      // TCP only: no socket file in a shared folder such as /tmp.
      "-c",
      "unix_socket_directories=",
      "-c",
      "lc_messages=C",
      ...(opts.scratch ? ["-c", "fsync=off", "-c", "synchronous_commit=off"] : []),
    ],
    ...spawnAs(opts.runAs),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    // Its own session: a Ctrl-C in the terminal stops the service, which then stops this.
    detached: true,
  }).spawn();
  let output = "";
  let ready: () => void;
  const isReady = new Promise<void>((r) => ready = r);
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const bytes of stream) {
      output = (output + decoder.decode(bytes, { stream: true })).slice(-KEEP_CHARS);
      if (output.includes(READY)) ready();
    }
  };
  // Read for the whole life of the postmaster: a full pipe would block its logging.
  const drained = Promise.all([drain(child.stdout), drain(child.stderr)]).catch(() => {});
  let running = true;
  const status = child.status.then(async (s) => {
    running = false;
    await Promise.race([drained, new Promise((r) => setTimeout(r, 1000))]);
    return s;
  });
  // If this process exits without stopping it, the postmaster still gets its fast shutdown.
  const onUnload = () => {
    if (running) signal(child, "SIGINT");
  };
  globalThis.addEventListener("unload", onUnload);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    isReady.then(() => "ready" as const),
    status.then(() => "exited" as const),
    new Promise<"timeout">((r) => timer = setTimeout(() => r("timeout"), START_TIMEOUT_MS)),
  ]);
  clearTimeout(timer);
  if (outcome !== "ready") {
    globalThis.removeEventListener("unload", onUnload);
    if (running) {
      signal(child, "SIGKILL");
      await status;
    }
    if (/could not bind|already in use/i.test(output)) {
      throw new PortTaken(`The embedded PostgreSQL could not listen: ${lastError(output)}`);
    }
    throw new StartupError(
      `The embedded PostgreSQL in ${opts.dir} did not start${
        outcome === "timeout" ? ` within ${START_TIMEOUT_MS / 1000} s` : ""
      }: ${lastError(output)}`,
    );
  }
  const url = (database: string) =>
    `postgres://postgres:${encodeURIComponent(opts.password)}@127.0.0.1:${port}/${database}`;
  let stopped: Promise<void> | undefined;
  const stop = () =>
    stopped ??= (async () => {
      globalThis.removeEventListener("unload", onUnload);
      if (!running) return;
      signal(child, "SIGINT"); // fast shutdown: ends sessions, writes a checkpoint
      if (await settles(status, STOP_GRACE_MS)) return;
      signal(child, "SIGQUIT"); // immediate shutdown: recovery at the next start
      if (await settles(status, 5_000)) return;
      signal(child, "SIGKILL");
      await status;
    })();
  return { port, url, stop };
}

/**
 * A postmaster.pid left by a process that was killed: when its postmaster still runs on this
 * folder, stop it (we hold the folder now); when the pid is someone else's, the file is stale.
 */
async function stopLeftover(dir: string): Promise<void> {
  const pidFile = join(dir, "postmaster.pid");
  let pid: number;
  try {
    pid = Number((await Deno.readTextFile(pidFile)).split("\n")[0]);
  } catch {
    return;
  }
  if (Number.isInteger(pid) && pid > 0 && await isPostmasterOf(pid, dir)) {
    Deno.kill(pid, "SIGINT");
    for (const deadline = Date.now() + STOP_GRACE_MS; Date.now() < deadline;) {
      if (!(await isPostmasterOf(pid, dir))) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    Deno.kill(pid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 500));
  }
  await Deno.remove(pidFile).catch(() => {});
}

async function isPostmasterOf(pid: number, dir: string): Promise<boolean> {
  try {
    const args = (await Deno.readTextFile(`/proc/${pid}/cmdline`)).split("\0");
    return args[0]?.endsWith("/postgres") && args.includes(dir);
  } catch {
    return false;
  }
}

function signal(child: Deno.ChildProcess, sig: Deno.Signal) {
  try {
    child.kill(sig);
  } catch { /* it has exited already */ }
}

async function settles(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const done = await Promise.race([
    p.then(() => true),
    new Promise<false>((r) => timer = setTimeout(() => r(false), ms)),
  ]);
  clearTimeout(timer);
  return done;
}

/** The line of PostgreSQL's output that says what went wrong. */
function lastError(output: string): string {
  const lines = output.split("\n").map((l) => l.trim()).filter(Boolean);
  const bad = lines.filter((l) => /FATAL|PANIC|ERROR|error|could not|denied/i.test(l));
  return (bad.at(-1) ?? lines.at(-1) ?? "no output").replace(/\s+/g, " ");
}

/** A free loopback port (bound, then released). */
function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}
