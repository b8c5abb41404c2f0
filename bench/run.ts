/**
 * `deno task bench`: seeds `bench_1m` when needed (`bench/seed.ts`), then runs B1 to B9, each in
 * its own process (so none inherits another's heap, workers or children), prints one Markdown
 * table and writes bench/RESULTS.md (with the date, the machine's cores and the command), keeping
 * its hand-written notes (bench/_lib/notes.ts).
 * `deno task bench b3 b5` runs only those.
 */
import { type BenchResult, markdownRows, RESULTS_DIR } from "./_lib/results.ts";
import { machineJiffies } from "./_lib/machine.ts";
import { LOCK_FLAG, ROOT } from "./_lib/processes.ts";
import { keepNotes } from "./_lib/notes.ts";

const BENCHES: [string, string][] = [
  ["b1", "bench/b1_thumbnails.ts"],
  ["b2", "bench/b2_upload.ts"],
  ["b3", "bench/b3_health_under_uploads.ts"],
  ["b4", "bench/b4_delivery.ts"],
  ["b5", "bench/b5_queries.ts"],
  ["b6", "bench/b6_library_page.ts"],
  ["b7", "bench/b7_cold_start.ts"],
  ["b8", "bench/b8_upload_rate.ts"],
  ["b9", "bench/b9_import.ts"],
  ["b10", "bench/b10_captions.ts"],
  ["b11", "bench/b11_similar.ts"],
  ["b12", "bench/b12_tags.ts"],
  ["b13", "bench/b13_login_burst.ts"],
  ["b14", "bench/b14_chat.ts"],
  ["b15", "bench/b15_lighthouse.ts"],
  ["b16", "bench/b16_anonymous.ts"],
  ["b17", "bench/b17_video.ts"],
];
/**
 * No benchmark may run longer than this. Four minutes cut B11 off on a machine half as fast as
 * the one it was sized on, while it seeded bench_similar_1m for the first time.
 */
const BENCH_TIMEOUT_MS = 8 * 60_000;

async function run(script: string, args: string[], timeoutMs: number): Promise<number> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", LOCK_FLAG, new URL(script, ROOT).pathname, ...args],
    cwd: ROOT.pathname,
    stdin: "null",
  }).spawn();
  const timer = setTimeout(() => child.kill("SIGTERM"), timeoutMs);
  const { code } = await child.status;
  clearTimeout(timer);
  return code;
}

async function text(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "null" }).output()
    .catch(() => null);
  return out ? new TextDecoder().decode(out.stdout).trim() : "?";
}

const only = Deno.args.map((a) => a.toLowerCase());
const selected = BENCHES.filter(([id]) => only.length === 0 || only.includes(id));
const started = performance.now();
const date = new Date().toISOString();
const loadBefore = Deno.loadavg().map((v) => v.toFixed(2)).join(" ");
const jiffiesBefore = await machineJiffies();
await Deno.mkdir(RESULTS_DIR, { recursive: true });

const seedStarted = performance.now();
const seedCode = only.length === 0 || only.includes("b5")
  ? await run("bench/seed.ts", [], 10 * 60_000)
  : 0;
const seedSeconds = (performance.now() - seedStarted) / 1000;

const results: BenchResult[] = [];
for (const [id, script] of selected) {
  const file = new URL(`${id}.json`, RESULTS_DIR).pathname;
  await Deno.remove(file).catch(() => {});
  const t0 = performance.now();
  const code = await run(script, ["--json", file], BENCH_TIMEOUT_MS);
  const seconds = (performance.now() - t0) / 1000;
  try {
    const r = JSON.parse(await Deno.readTextFile(file)) as BenchResult;
    results.push({ ...r, seconds });
  } catch {
    results.push({
      id: id.toUpperCase(),
      title: script,
      rows: [],
      notes: [
        `did not report (exit code ${code}, ${seconds.toFixed(0)} s; timeout ${
          BENCH_TIMEOUT_MS / 1000
        } s)`,
      ],
      seconds,
    });
  }
}
const total = (performance.now() - started) / 1000;
const loadAfter = Deno.loadavg().map((v) => v.toFixed(2)).join(" ");
const jiffiesAfter = await machineJiffies();
const steal = (jiffiesAfter.steal - jiffiesBefore.steal) /
  Math.max(1, jiffiesAfter.total - jiffiesBefore.total);

const cores = await text("nproc", []);
const cpu = (await text("sh", ["-c", "grep -m1 'model name' /proc/cpuinfo | cut -d: -f2"])) || "?";
const mem = await text("sh", [
  "-c",
  "grep MemTotal /proc/meminfo | awk '{print int($2/1024) \" MiB\"}'",
]);
const pg = await text("psql", [
  Deno.env.get("BENCH_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/postgres",
  "-Atc",
  "show server_version",
]);
const command = `deno task bench${Deno.args.length ? ` ${Deno.args.join(" ")}` : ""}`;

const summary = [
  "| # | benchmark | metric | value | baseline | ratio | target | met |",
  "|---|---|---|---|---|---|---|---|",
  ...results.flatMap((r) =>
    r.rows.length
      ? r.rows.map((row) =>
        `| ${r.id} | ${r.title} | ${row.metric} | ${row.value} | ${row.baseline} | ${row.ratio} | ${row.target} | ${
          row.met === null ? "-" : row.met ? "yes" : "**NO**"
        } |`
      )
      : [`| ${r.id} | ${r.title} | (no figures) | - | - | - | - | - |`]
  ),
].join("\n");

const md = [
  "# Benchmark results",
  "",
  `- date: ${date}`,
  `- machine: ${cores} cores (\`nproc\`),${
    cpu ? ` ${cpu.trim()},` : ""
  } ${mem}; PostgreSQL ${pg}; Deno ${Deno.version.deno}`,
  `- command: \`${command}\``,
  `- load average (1/5/15 min) at the start ${loadBefore}, at the end ${loadAfter} (the benchmarks`,
  "  keep both cores busy themselves; anything above that is other work on the machine)",
  `- CPU steal over the run: ${(100 * steal).toFixed(0)}% of the machine's CPU time went to other`,
  "  guests of the host (/proc/stat): a virtual machine whose cores were not there when it wanted",
  "  them. Each benchmark's notes give its own share.",
  `- total run time: ${total.toFixed(0)} s (seeding step ${seedSeconds.toFixed(0)} s${
    seedCode ? `, exit code ${seedCode}` : ""
  })`,
  "- every ratio is against a baseline measured in the same run; latencies are given with the",
  "  load that produced them. The service runs in its own process (`bench/serve.ts`), s3rver in",
  "  another (`tests/_harness/s3_process.ts`); load comes from the bench process, over loopback",
  "  only.",
  "  Everything shares the same cores, so these are figures for this machine under its noise.",
  "",
  "## Summary",
  "",
  summary,
  "",
  ...results.flatMap((r) => [
    `## ${r.id} ${r.title} (${r.seconds.toFixed(0)} s)`,
    "",
    r.rows.length ? markdownRows(r.rows) : "(no figures)",
    "",
    ...r.notes.map((n) => `- ${n}`),
    "",
  ]),
].join("\n");

console.log(`\n${summary}\n\ntotal ${total.toFixed(0)} s`);
if (only.length === 0) {
  const file = new URL("RESULTS.md", import.meta.url).pathname;
  const previous = await Deno.readTextFile(file).catch(() => "");
  await Deno.writeTextFile(file, keepNotes(md, previous));
  // Keep `deno fmt --check` (part of `deno task ok`) clean.
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "-q", file], cwd: ROOT.pathname })
    .output();
  console.log("wrote bench/RESULTS.md");
} else {
  const partial = new URL(`results/partial-${only.join("-")}.md`, import.meta.url);
  await Deno.writeTextFile(partial, md);
  console.log(`wrote ${partial.pathname} (a partial run does not replace bench/RESULTS.md)`);
}
