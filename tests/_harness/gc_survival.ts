/**
 * How much of what V8's young generation allocates survives its collections (scavenges) while a
 * process reads query results through the service's own client (db/client.ts, postgres.js),
 * one query at a time: `gc_rows_child.ts` in a child under `--trace-gc-nvp`, whose per-collection
 * figures are summed here. Garbage that survives a scavenge is copied, then promoted, and waits
 * for a full collection; each such scavenge holds the event loop for milliseconds.
 */

/** The young-generation collections of one child run. */
export interface Survival {
  scavenges: number;
  /** Bytes the young generation allocated, over every scavenge. */
  allocated: number;
  /** The share of `allocated` that survived a scavenge (copied or promoted), 0..1. */
  survived: number;
  pauseMs: number;
  longestMs: number;
  markCompacts: number;
}

const CHILD = new URL("./gc_rows_child.ts", import.meta.url).pathname;

/**
 * Runs `queries` queries on `databaseUrl`, each returning `rows` rows of three integers (51 is a
 * listing page), in a child process, and sums V8's figures for its scavenges.
 */
export async function youngSurvival(
  databaseUrl: string,
  queries: number,
  rows: number,
): Promise<Survival> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-env", "--allow-net", "--allow-read", "--v8-flags=--trace-gc-nvp", CHILD],
    env: { GC_DATABASE_URL: databaseUrl, GC_QUERIES: String(queries), GC_ROWS: String(rows) },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) {
    throw new Error(`gc_rows_child.ts failed: ${new TextDecoder().decode(out.stderr)}`);
  }
  const gcs = new TextDecoder().decode(out.stdout).split("\n")
    .filter((line) => line.includes('{"pause"'))
    .map((line) => JSON.parse(line.slice(line.indexOf('{"pause"'))) as Record<string, unknown>);
  const scavenges = gcs.filter((g) => g.gc === "s");
  const sum = (key: string) => scavenges.reduce((a, g) => a + Number(g[key] ?? 0), 0);
  const allocated = sum("allocated");
  return {
    scavenges: scavenges.length,
    allocated,
    survived: allocated ? (sum("new_space_survived") + sum("promoted")) / allocated : 0,
    pauseMs: sum("pause"),
    longestMs: Math.max(0, ...scavenges.map((g) => Number(g.pause))),
    markCompacts: gcs.filter((g) => g.gc === "mc").length,
  };
}
