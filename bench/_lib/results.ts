/**
 * The result format of the benchmarks: rows, their formatting, and the report each benchmark
 * prints (and writes as JSON for `bench/run.ts`).
 *
 * @module
 */

/** Where benchmark results (JSON, one per benchmark) are written by `bench/run.ts`. */
export const RESULTS_DIR = new URL("../results/", import.meta.url);

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
