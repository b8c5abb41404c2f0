/**
 * Shared pieces of the benchmarks: child processes (the service under test, s3rver), a bounded
 * load generator with percentiles, benchmark databases, generated images and the result format.
 *
 * Every benchmark runs the service in its own process (`bench/serve.ts`) and drives it from the
 * bench process over loopback only, so the load generator never shares an event loop with it.
 *
 * @module
 */
import postgres from "postgres";
import sharp from "sharp";
import { S3Store } from "../adapters/storage/s3.ts";
import { START_SIGNAL, STOP_SIGNAL } from "./_signals.ts";

/** Where benchmark results (JSON, one per benchmark) are written by `bench/run.ts`. */
export const RESULTS_DIR = new URL("./results/", import.meta.url);
/** The repository root. */
export const ROOT = new URL("../", import.meta.url);

// ---------------------------------------------------------------------------------------------
// Results

/** One measured line of a benchmark. */
export interface Row {
  /** What was measured, with its load (concurrency, size, count). */
  metric: string;
  /** The figure, already formatted with its unit. */
  value: string;
  /** The baseline measured in the same run, formatted, or "-". */
  baseline: string;
  /** value / baseline (or the ratio the target talks about), formatted, or "-". */
  ratio: string;
  /** The target in words, or "-". */
  target: string;
  /** Whether the target was met; null when there is none. */
  met: boolean | null;
}

/** What one benchmark reports. */
export interface BenchResult {
  id: string;
  title: string;
  rows: Row[];
  notes: string[];
  seconds: number;
}

/** Formats milliseconds. */
export const ms = (v: number) =>
  `${v < 10 ? v.toFixed(2) : v < 100 ? v.toFixed(1) : v.toFixed(0)} ms`;
/** Formats a ratio. */
export const x = (v: number) => `${v.toFixed(2)}x`;
/** Formats a rate. */
export const perS = (v: number, unit = "req/s") => `${v.toFixed(v < 10 ? 2 : 0)} ${unit}`;

/** Prints `result` as a Markdown table and, when `--json <file>` is given, writes it there. */
export async function report(result: BenchResult): Promise<void> {
  console.log(`\n## ${result.id} ${result.title}\n`);
  console.log(markdownRows(result.rows));
  for (const n of result.notes) console.log(`- ${n}`);
  const i = Deno.args.indexOf("--json");
  if (i >= 0 && Deno.args[i + 1]) {
    await Deno.writeTextFile(Deno.args[i + 1], JSON.stringify(result, null, 2));
  }
}

/** The rows of a result as a Markdown table. */
export function markdownRows(rows: Row[]): string {
  const head = "| metric | value | baseline | ratio | target | met |\n|---|---|---|---|---|---|";
  const body = rows.map((r) =>
    `| ${r.metric} | ${r.value} | ${r.baseline} | ${r.ratio} | ${r.target} | ${
      r.met === null ? "-" : r.met ? "yes" : "**NO**"
    } |`
  );
  return [head, ...body].join("\n");
}

/**
 * CPU jiffies of the whole machine so far (/proc/stat): busy (this machine's own work), steal
 * (time the hypervisor gave to other guests while this one wanted to run) and the total.
 */
export async function machineJiffies(): Promise<{ busy: number; steal: number; total: number }> {
  const line = (await Deno.readTextFile("/proc/stat")).split("\n")[0];
  // user nice system idle iowait irq softirq steal (guest time is already counted in user)
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = line.trim().split(/\s+/)
    .slice(1).map(Number);
  const busy = user + nice + system + irq + softirq;
  return { busy, steal, total: busy + idle + iowait + steal };
}

/**
 * Waits until the machine has been nearly idle (under 15% busy) for half a second, at most
 * `maxMs`; returns how long it waited. What the previous benchmark left running (a database
 * dropped with its checkpoint, children still exiting) otherwise lands in the next one's
 * figures: B7's reader once took 376 ms right after B6 and 230 ms on a quiet machine. Steal is
 * not this machine's work, so it does not count as busy.
 */
export async function settle(maxMs = 20_000): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < maxMs) {
    const a = await machineJiffies();
    await new Promise((r) => setTimeout(r, 500));
    const b = await machineJiffies();
    if ((b.busy - a.busy) / Math.max(1, b.total - a.total) < 0.15) break;
  }
  return performance.now() - t0;
}

/**
 * Runs `fn` as a benchmark main: waits for a quiet machine, then timing, report, and a clean
 * exit (children are killed).
 */
export async function benchMain(
  id: string,
  title: string,
  fn: (notes: string[]) => Promise<Row[]>,
): Promise<void> {
  const notes: string[] = [];
  const waited = await settle();
  if (waited > 1000) notes.push(`waited ${ms(waited)} for the machine to settle first`);
  const started = performance.now();
  const before = await machineJiffies();
  let rows: Row[] = [];
  try {
    rows = await fn(notes);
  } catch (e) {
    notes.push(`FAILED: ${(e as Error)?.stack ?? e}`);
    console.error(e);
  } finally {
    await stopAllChildren();
  }
  const seconds = (performance.now() - started) / 1000;
  const after = await machineJiffies();
  const stolen = (after.steal - before.steal) / Math.max(1, after.total - before.total);
  notes.push(
    `CPU steal during this benchmark: ${(100 * stolen).toFixed(0)}% of the machine's CPU time ` +
      `went to other guests of the host (/proc/stat), time these figures could not use`,
  );
  await report({ id, title, rows, notes, seconds });
  Deno.exit(0);
}

/**
 * The rows of a benchmark made of named parts (`--name` runs that one only); a part that fails
 * is reported in the notes and the others still run.
 */
export async function runParts(
  notes: string[],
  parts: Record<string, (notes: string[]) => Promise<Row[]>>,
): Promise<Row[]> {
  const only = Deno.args.find((a) => a.startsWith("--") && a.slice(2) in parts)?.slice(2);
  const rows: Row[] = [];
  for (const [name, part] of Object.entries(parts)) {
    if (only && only !== name) continue;
    try {
      rows.push(...await part(notes));
    } catch (e) {
      notes.push(`FAILED (--${name}): ${(e as Error)?.stack ?? e}`);
    }
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Statistics and load

/** The `p`-th percentile (0-100) of `values` (nearest rank). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** The median of `values`. */
export const median = (values: number[]) => percentile(values, 50);

/** A deterministic stream of numbers in [0, 1) (mulberry32). */
export function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * A rank in 1..n from `u` in [0, 1), drawn like bench/seed.ts draws tags (log-uniform:
 * floor(exp(u * ln(n + 1))), rank r with probability ~ 1/r).
 */
export const zipf = (u: number, n: number) =>
  Math.min(n, Math.max(1, Math.floor(Math.exp(u * Math.log(n + 1)))));

/** What a load run measured. */
export interface LoadResult {
  requests: number;
  errors: number;
  elapsedMs: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  latencies: number[];
  firstError?: string;
}

/** Options of `load()`: N loops, each bounded by count and time. */
export interface LoadOptions {
  concurrency: number;
  /** Stop starting requests after this long. */
  durationMs: number;
  /** Stop after this many requests in all (default: unbounded within the duration). */
  maxRequests?: number;
  /** Requests not timed (per loop) before measuring starts. */
  warmup?: number;
  /** Stop early when this resolves (e.g. the background work being measured is over). */
  until?: Promise<unknown>;
}

/**
 * Runs `concurrency` loops of `request(i)`, each awaiting the previous one; a request counts as
 * an error when it throws or `ok(res)` is false. Bodies are consumed fully.
 */
export async function load(
  opts: LoadOptions,
  request: (i: number) => Promise<Response>,
  ok: (res: Response) => boolean = (res) => res.ok,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  let stop = false;
  opts.until?.then(() => (stop = true), () => (stop = true));
  const one = async (i: number) => {
    const t0 = performance.now();
    try {
      const res = await request(i);
      await res.arrayBuffer();
      if (!ok(res)) {
        errors++;
        firstError ??= `HTTP ${res.status}`;
      }
    } catch (e) {
      errors++;
      firstError ??= String(e);
    }
    return performance.now() - t0;
  };
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      for (let w = 0; w < (opts.warmup ?? 0); w++) await one(-1);
    }),
  );
  const started = performance.now();
  const deadline = started + opts.durationMs;
  const max = opts.maxRequests ?? Infinity;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (!stop && performance.now() < deadline && next < max) {
        latencies.push(await one(next++));
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  return {
    requests: latencies.length,
    errors,
    elapsedMs,
    rps: latencies.length / (elapsedMs / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
    latencies,
    firstError,
  };
}

/** Times `fn` `n` times (bounded by `maxMs`, at least once); returns every duration in ms. */
export async function timeRuns(
  n: number,
  maxMs: number,
  fn: (i: number) => Promise<unknown>,
): Promise<number[]> {
  const out: number[] = [];
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < n && (i === 0 || performance.now() < deadline); i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Child processes

interface Child {
  process: Deno.ChildProcess;
  name: string;
}

const children = new Set<Child>();

/** Temporary folders of services started here, removed when they stop. */
const tempDirs = new Set<string>();

/** Kills every child started through this module (SIGTERM, then SIGKILL after 5 s). */
export async function stopAllChildren(): Promise<void> {
  await Promise.all([...children].map((c) => stopChild(c)));
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
    args: ["run", "-A", "--no-lock", ...denoFlags, new URL(script, ROOT).pathname],
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

/** Resident memory of a process in KiB (VmRSS) and its peak (VmHWM), from /proc. */
export async function memoryKb(pid: number): Promise<{ rss: number; hwm: number }> {
  const text = await Deno.readTextFile(`/proc/${pid}/status`);
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1]);
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}

/** CPU time (user + system) a process has used so far, in ms (from /proc/<pid>/stat). */
export async function cpuMs(pid: number): Promise<number> {
  const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line, in clock ticks (100 per second).
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

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

/** POSTs one upload (a file, or a form built beforehand); resolves with the response (body not read). */
export function upload(
  base: string,
  auth: Record<string, string>,
  file: Uint8Array | UploadForm,
  tags: string[] = [],
): Promise<Response> {
  const { body, contentType } = file instanceof Uint8Array ? multipartBody(file, tags) : file;
  return fetch(`${base}/api/v1/images`, {
    method: "POST",
    headers: { ...auth, "content-type": contentType },
    body,
  });
}

/**
 * An upload form encoded by hand into one buffer (one copy of the file), so the client spends
 * as little as possible on it: what a browser sends for `<input type=file>` plus tags.
 */
export interface UploadForm {
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
}

export function multipartBody(bytes: Uint8Array, tags: string[] = []): UploadForm {
  const boundary = `----bench${randomHex()}${randomHex()}`;
  const enc = new TextEncoder();
  const head = enc.encode(
    tags.map((t) => `--${boundary}\r\nContent-Disposition: form-data; name="tags"\r\n\r\n${t}\r\n`)
      .join("") +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload.jpg"\r\n` +
      `Content-Type: image/jpeg\r\n\r\n`,
  );
  const tail = enc.encode(`\r\n--${boundary}--\r\n`);
  const body = new Uint8Array(head.length + bytes.length + tail.length);
  body.set(head, 0);
  body.set(bytes, head.length);
  body.set(tail, head.length + bytes.length);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** The event loop's longest stretches while a watch ran (ms). */
export interface LoopGaps {
  /** The longest wall-clock gap between two ticks of a 1 ms timer. */
  gap: number;
  /**
   * The most CPU time the loop's thread spent between two ticks: how long the loop was really
   * held, whatever the machine's load (a busy machine also makes the thread wait for a core,
   * which only `gap` counts).
   */
  ran: number;
  /** Gaps over 5 ms, and over 20 ms. */
  over5: number;
  over20: number;
}

/**
 * This thread's time on a CPU so far (ms, ns resolution), from the Linux scheduler: the thread of
 * the event loop that calls it, which is not always the process's first (`deno test --parallel`
 * runs each test file on a thread of its own).
 */
function loopThreadRanMs(): number {
  const schedstat = Deno.readTextFileSync("/proc/thread-self/schedstat");
  return Number(schedstat.split(" ")[0]) / 1e6;
}

/**
 * Watches this process's event loop with a 1 ms timer until `stop()`. A stall seen by a load
 * generator would be its own, not the service's.
 */
export function watchEventLoop(): { stop(): LoopGaps } {
  const worst: LoopGaps = { gap: 0, ran: 0, over5: 0, over20: 0 };
  let last = performance.now();
  let lastRan = loopThreadRanMs();
  const tick = () => {
    const now = performance.now();
    const ran = loopThreadRanMs();
    const gap = now - last;
    worst.gap = Math.max(worst.gap, gap);
    if (gap > 5) worst.over5++;
    if (gap > 20) worst.over20++;
    worst.ran = Math.max(worst.ran, ran - lastRan);
    last = now;
    lastRan = ran;
  };
  const timer = setInterval(tick, 1);
  return {
    stop: () => {
      clearInterval(timer);
      // A loop blocked until now never ran the timer: count that stretch too.
      tick();
      return { ...worst };
    },
  };
}

/**
 * POSTs `form` over a plain socket (HTTP/1.1, `connection: close`) and reads the whole response;
 * resolves with the status. Deno's fetch spends about 6 ms on a 5.3 MB body before the service
 * sees the request, a socket write 0.2 ms: this is how wrk or a browser would send it.
 */
export async function socketUpload(
  base: string,
  auth: Record<string, string>,
  form: UploadForm,
): Promise<number> {
  const url = new URL(base);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const head = [
    "POST /api/v1/images HTTP/1.1",
    `host: ${url.host}`,
    `content-type: ${form.contentType}`,
    `content-length: ${form.body.length}`,
    ...Object.entries(auth).map(([k, v]) => `${k}: ${v}`),
    "connection: close",
    "",
    "",
  ].join("\r\n");
  for (const bytes of [new TextEncoder().encode(head), form.body]) {
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
  }
  // Read to the end of the stream, which closes the connection.
  const response = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
  return Number(response.slice(9, 12));
}

/** An upload that must create a new image (201); returns its short ID. */
export async function uploadNew(
  base: string,
  auth: Record<string, string>,
  file: Uint8Array | UploadForm,
  tags: string[] = [],
): Promise<string> {
  const res = await upload(base, auth, file, tags);
  const body = await res.json();
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
  return body.short_id;
}

// ---------------------------------------------------------------------------------------------
// Databases

/** The PostgreSQL server of the benchmarks. */
export function serverUrl(): string {
  return Deno.env.get("BENCH_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/postgres";
}

/** The URL of database `name` on the bench server. */
export function databaseUrl(name: string): string {
  const u = new URL(serverUrl());
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Reads every table and index of database `url` into the operating system's file cache
 * (pg_prewarm, `read` mode), and returns how many MB that was. A board in use keeps the pages its
 * requests read in that cache; a benchmark that follows others may not: these machines reclaim
 * memory nobody touched for seconds (DAMON's `pageout` scheme, `/sys/kernel/mm/damon`), and after
 * three minutes of other benchmarks B10's caption searches read the caption tables from disk
 * (16-24 searches a second with a tag, p99 1.7-3.2 s, against 330-420 and 62-146 ms warm).
 */
export async function prewarm(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`create extension if not exists pg_prewarm`;
    const [{ mb }] = await sql<{ mb: number }[]>`
      select (sum(pg_prewarm(c.oid, 'read')) * current_setting('block_size')::int / 1e6)::int as mb
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'i', 't', 'm')`;
    return mb;
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/** Runs `fn` on an admin connection to the server's default database. */
export async function withAdmin<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const admin = postgres(serverUrl(), { max: 1, onnotice: () => {} });
  try {
    return await fn(admin);
  } finally {
    await admin.end({ timeout: 2 });
  }
}

/** A fresh, empty database `bench_<random>`; `drop()` removes it. */
export async function freshDatabase(): Promise<
  { name: string; url: string; drop(): Promise<void> }
> {
  const name = `bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  await withAdmin((sql) => sql.unsafe(`create database ${name}`));
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      await withAdmin((sql) => sql.unsafe(`drop database if exists ${name} with (force)`));
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Images

/**
 * A realistic-looking photo-like image: smooth colour gradients plus per-pixel noise (so it
 * compresses like a photo, not like a solid colour), different for every `seed`.
 */
export function photoPixels(width: number, height: number, seed: number): Uint8Array {
  const px = new Uint8Array(width * height * 3);
  let s = (seed * 2654435761) >>> 0 || 1;
  const rand = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s & 0xff;
  };
  const fx = 0.5 + (seed % 7) * 0.1;
  for (let y = 0; y < height; y++) {
    const gy = y / height;
    for (let x = 0; x < width; x++) {
      const gx = x / width;
      const i = (y * width + x) * 3;
      const n = (rand() & 63) - 32;
      const wave = 40 * Math.sin((gx * fx + gy) * 12);
      px[i] = clamp(255 * gx + n + wave);
      px[i + 1] = clamp(255 * gy + n - wave);
      px[i + 2] = clamp(128 + 100 * Math.sin((gx - gy) * 8 + seed) + n);
    }
  }
  return px;
}

const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v);

/** A photo-like JPEG of `width`x`height` (quality 90), different for every `seed`. */
export async function photoJpeg(width: number, height: number, seed: number): Promise<Uint8Array> {
  const raw = photoPixels(width, height, seed);
  const out = await sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 })
    .toBuffer();
  return new Uint8Array(out);
}

/**
 * `photoJpeg(width, height, seed)`, generated once and then read from `bench/results/cache/`
 * (12 MP takes about a second of CPU to make; B3 needs twenty).
 */
export async function cachedPhotoJpeg(
  width: number,
  height: number,
  seed: number,
): Promise<Uint8Array> {
  const dir = new URL("./cache/", RESULTS_DIR);
  const file = new URL(`photo-${width}x${height}-${seed}.jpg`, dir);
  try {
    return await Deno.readFile(file);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const jpeg = await photoJpeg(width, height, seed);
  await Deno.mkdir(dir, { recursive: true });
  // Written aside and renamed, so a run stopped half-way never leaves a truncated file.
  const part = new URL(`${file.pathname}.${randomHex()}.part`, file);
  await Deno.writeFile(part, jpeg);
  await Deno.rename(part, file);
  return jpeg;
}

/**
 * The same JPEG with a COM segment (`tag`) right after SOI: a valid JPEG with other bytes (and
 * so another content hash) but the same pixels, without re-encoding 12 megapixels.
 */
export function withComment(jpeg: Uint8Array, tag: string): Uint8Array {
  const text = new TextEncoder().encode(tag);
  const len = text.length + 2;
  const out = new Uint8Array(jpeg.length + 4 + text.length);
  out.set(jpeg.subarray(0, 2), 0);
  out.set([0xff, 0xfe, len >> 8, len & 0xff], 2);
  out.set(text, 6);
  out.set(jpeg.subarray(2), 6 + text.length);
  return out;
}

/** Bytes of a short random hex string, for distinct names. */
export const randomHex = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12);

/** How often the health prober of B3 and B10 asks. */
export const PROBE_INTERVAL_MS = 10;

/** What the prober saw: every latency, the failures, and how late its own timer ran at most. */
export interface Probes {
  latencies: number[];
  errors: number;
  lag: number;
}

/**
 * Probes `${base}/api/v1/health` every PROBE_INTERVAL_MS on a fixed schedule, from a process of
 * its own (bench/_health_prober.ts), while `during` runs.
 */
export async function probeWhile(base: string, during: () => Promise<unknown>): Promise<Probes> {
  const file = await Deno.makeTempFile({ prefix: "bench-probe-" });
  try {
    const prober = await spawnReady("bench/_health_prober.ts", {
      URL: `${base}/api/v1/health`,
      INTERVAL_MS: String(PROBE_INTERVAL_MS),
      RESULT_FILE: file,
    });
    Deno.kill(prober.pid, START_SIGNAL);
    await during();
    Deno.kill(prober.pid, STOP_SIGNAL);
    await prober.exited;
    return JSON.parse(await Deno.readTextFile(file));
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}
