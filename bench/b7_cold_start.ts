/**
 * B7: cold start, from process spawn to the first 200 of GET /api/v1/health:
 * - main.ts on the embedded default (no DATABASE_URL, no S3) with an existing DATA_DIR: started
 *   once to initialise it, stopped, then timed on later starts (embedded PostgreSQL included);
 * - reader.ts (when present) on a migrated database and s3rver, with the flags it documents.
 * Both are run as `deno task start` / `deno task reader` would run them, with a warm module
 * cache (the first start compiles and caches the modules). Absolute figures, no baseline.
 */
import { migrate } from "../services/migrate.ts";
import { createSql } from "../db/client.ts";
import { FsStore } from "../adapters/storage/fs.ts";
import { benchMain } from "./_lib/bench_main.ts";
import { freshBenchDatabase } from "./_lib/databases.ts";
import { median } from "./_lib/stats.ts";
import { ms, type Row } from "./_lib/results.ts";
import { ROOT } from "./_lib/processes.ts";
import { settle } from "./_lib/machine.ts";
import { startBenchS3 } from "./_lib/service.ts";

const MAIN_FLAGS = [
  "--allow-net",
  "--allow-env",
  "--allow-read",
  "--allow-write",
  "--allow-run",
  "--allow-sys",
  "--allow-ffi",
];
const READER_FLAGS = [
  "--no-prompt",
  "--allow-net",
  "--allow-env",
  "--allow-read=_build",
  "--allow-sys=osRelease",
];
/** Timed starts of main.ts (each starts the embedded PostgreSQL) and of reader.ts. */
const MAIN_STARTS = 5;
const READER_STARTS = 9;

function freePort(): number {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr as Deno.NetAddr;
  l.close();
  return port;
}

/** What one start took (ms from spawn). */
interface StartTimes {
  /** The first 200 of /api/v1/health. */
  ok: number;
  /** When the first request that got any answer was sent: it was listening by then. */
  listening: number;
  /** How long that first answered request took. */
  firstRequest: number;
}

/** Spawns `script`, polls health every 5 ms until the first 200, then stops it. */
async function timedStart(
  script: string,
  flags: string[],
  env: Record<string, string>,
  timeoutMs: number,
): Promise<StartTimes> {
  const port = freePort();
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, script],
    env: { ...env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" },
    cwd: ROOT.pathname,
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const stderr = new Response(child.stderr).text();
  let exited = false;
  child.status.then(() => (exited = true));
  let listening: number | undefined;
  let firstRequest: number | undefined;
  try {
    while (true) {
      if (exited) throw new Error(`${script} exited: ${(await stderr).slice(0, 2000)}`);
      if (performance.now() - t0 > timeoutMs) {
        throw new Error(`${script}: no 200 in ${timeoutMs} ms`);
      }
      const sent = performance.now();
      try {
        const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
        await res.body?.cancel();
        listening ??= sent - t0;
        firstRequest ??= performance.now() - sent;
        if (res.status === 200) return { ok: performance.now() - t0, listening, firstRequest };
      } catch { /* not listening yet */ }
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    if (!exited) child.kill("SIGTERM");
    const killer = setTimeout(() => !exited && child.kill("SIGKILL"), 30_000);
    await child.status;
    clearTimeout(killer);
    await stderr.catch(() => {});
  }
}

/** Spawn to the first line `script` prints (it prints once loaded, then exits), in ms. */
async function timedLoaded(script: string, flags: string[]): Promise<number> {
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, script],
    cwd: ROOT.pathname,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const { value } = await reader.read();
  const elapsed = performance.now() - t0;
  await reader.cancel();
  const out = await child.output().catch(() => null);
  if (!value?.startsWith("loaded")) {
    throw new Error(`${script}: ${out ? new TextDecoder().decode(out.stderr) : "no output"}`);
  }
  return elapsed;
}

if (import.meta.main) {
  await benchMain("B7", "cold start to the first 200 of /api/v1/health", async (notes) => {
    const rows: Row[] = [];
    const dataDir = await Deno.makeTempDir({ prefix: "bench-cold-" });
    try {
      const env = { DATA_DIR: dataDir };
      const init = (await timedStart("main.ts", MAIN_FLAGS, env, 180_000)).ok;
      const starts: StartTimes[] = [];
      for (let i = 0; i < MAIN_STARTS; i++) {
        starts.push(await timedStart("main.ts", MAIN_FLAGS, env, 60_000));
      }
      const runs = starts.map((t) => t.ok);
      notes.push(
        `main.ts first start (initialises DATA_DIR, embedded initdb) ${ms(init)}; later starts ${
          runs.map((v) => v.toFixed(0)).join(", ")
        } ms; listening after ${ms(median(starts.map((t) => t.listening)))} (median)`,
      );
      rows.push({
        metric: `main.ts, embedded default, existing DATA_DIR, median of ${runs.length}`,
        value: ms(median(runs)),
        baseline: "none (absolute)",
        ratio: "-",
        target: "-",
        met: null,
      });
    } finally {
      await Deno.remove(dataDir, { recursive: true }).catch(() => {});
    }

    const readerExists = await Deno.stat(new URL("reader.ts", ROOT)).then(() => true, () => false);
    if (!readerExists) {
      notes.push("reader.ts does not exist in this checkout: not measured");
      rows.push({
        metric: "reader.ts",
        value: "absent",
        baseline: "-",
        ratio: "-",
        target: "< 300 ms",
        met: false,
      });
      return rows;
    }
    const db = await freshBenchDatabase();
    try {
      const sql = createSql(db.url, { max: 2 });
      const objects = await Deno.makeTempDir({ prefix: "bench-reader-" });
      await migrate(sql, new FsStore(objects));
      await sql.end();
      await Deno.remove(objects, { recursive: true });
      const s3 = await startBenchS3();
      const env = {
        DATABASE_URL: db.url,
        S3_BUCKET: s3.bucket,
        S3_ENDPOINT: s3.endpoint,
        S3_ACCESS_KEY_ID: "S3RVER",
        S3_SECRET_ACCESS_KEY: "S3RVER",
      };
      await timedStart("reader.ts", READER_FLAGS, env, 120_000); // fills the module cache
      // The embedded PostgreSQL of the main.ts starts may still be shutting down.
      const waited = await settle();
      if (waited > 1000) notes.push(`reader: waited ${ms(waited)} for the machine to settle`);
      const starts: StartTimes[] = [];
      for (let i = 0; i < READER_STARTS; i++) {
        starts.push(await timedStart("reader.ts", READER_FLAGS, env, 60_000));
      }
      const runs = starts.map((t) => t.ok);
      notes.push(
        `reader.ts starts ${runs.map((v) => v.toFixed(0)).join(", ")} ms (min ${
          ms(Math.min(...runs))
        }); machine load average at the end: ${Deno.loadavg().map((v) => v.toFixed(2)).join(" ")}`,
      );
      // Where the time goes: the runtime alone, then the reader's module graph alone.
      const empties: number[] = [];
      const graph: number[] = [];
      await timedLoaded("bench/_empty.ts", READER_FLAGS); // warm the module cache
      await timedLoaded("bench/_import_reader.ts", READER_FLAGS);
      for (let i = 0; i < 5; i++) {
        empties.push(await timedLoaded("bench/_empty.ts", READER_FLAGS));
        graph.push(await timedLoaded("bench/_import_reader.ts", READER_FLAGS));
      }
      const empty = median(empties);
      const g = median(graph);
      notes.push(
        `reader.ts breakdown (medians of 5, spawn to a printed line): an empty program ${
          ms(empty)
        }; ` +
          `a program that only imports reader.ts ${ms(g)} (so ~${
            ms(g - empty)
          } loading and evaluating modules); reader.ts listening after ${
            ms(median(starts.map((t) => t.listening)))
          }; its first health request (first PostgreSQL connection, first S3 HeadBucket) took ${
            starts.map((t) => t.firstRequest.toFixed(0)).join(", ")
          } ms`,
      );
      const m = median(runs);
      rows.push({
        metric: `reader.ts, PostgreSQL + s3rver, median of ${runs.length}`,
        value: ms(m),
        baseline: "none (absolute)",
        ratio: "-",
        target: "< 300 ms",
        met: m < 300,
      });
    } finally {
      await db.drop();
    }
    return rows;
  });
}
