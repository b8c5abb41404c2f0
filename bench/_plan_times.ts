/**
 * Diagnostic: the generic plan's execution time and shared buffers of each listing shape on
 * bench_1m, the median of 7 runs: `deno run -A bench/_plan_times.ts`.
 */
import postgres from "postgres";
import { listImages } from "../db/images.ts";
import { databaseUrl } from "./_lib/databases.ts";
import { SEED_DB } from "./seed.ts";

const url = databaseUrl(SEED_DB);
const cases: [string, string[], string | null][] = [
  ["newest", [], null],
  ["newest after 10,000", [], "990000"],
  ["t1", ["t1"], null],
  ["rare t5000", ["t5000"], null],
  ["t2,t3 (merged)", ["t2", "t3"], null],
  ["t1,t500 (probed)", ["t1", "t500"], null],
  ["t3,t4,t5", ["t3", "t4", "t5"], null],
  ["t1,t2 after 10,000", ["t1", "t2"], "990000"],
];
const plain = postgres(url, { max: 1, onnotice: () => {}, connection: { jit: "off" } });
for (const [name, tags, beforeSeq] of cases) {
  const captured: { query: string; params: unknown[] }[] = [];
  const traced = postgres(url, {
    max: 1,
    onnotice: () => {},
    debug: (_c, query, params) => captured.push({ query, params: params as unknown[] }),
  });
  await listImages(traced, { tags, limit: 51, beforeSeq });
  await traced.end();
  const { query, params } = captured.find((q) => !q.query.includes("pg_catalog"))!;
  const literal = (v: unknown) => `'${String(v).replaceAll("'", "''")}'`;
  await plain.unsafe(`prepare q as ${query}`);
  await plain.unsafe(`set plan_cache_mode = force_generic_plan`);
  const times: number[] = [];
  let buffers = "";
  for (let i = 0; i < 7; i++) {
    const rows = await plain.unsafe(
      `explain (analyze, buffers) execute q${
        params.length ? `(${params.map(literal).join(", ")})` : ""
      }`,
    );
    const lines = rows.map((r) => r["QUERY PLAN"] as string);
    times.push(Number(/Execution Time: ([\d.]+)/.exec(lines.at(-1)!)![1]));
    buffers = lines[1]?.match(/Buffers: .*/)?.[0] ?? lines.find((l) => l.includes("Buffers"))!;
  }
  await plain.unsafe(`reset plan_cache_mode; deallocate q`);
  times.sort((a, b) => a - b);
  console.log(`${name.padEnd(22)} ${times[3].toFixed(2)} ms  ${buffers.trim()}`);
}
await plain.end();
