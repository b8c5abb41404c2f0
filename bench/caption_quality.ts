/**
 * Caption recognition quality and speed on the caption corpus (tests/_harness/caption_corpus.ts):
 * every image read by CaptionReader (tesseract.js), and with `--engine debian` (or `both`) by
 * Debian's `tesseract` CLI through the same preprocessing and word choice; then searched with the
 * service's own search (db/caption_search.ts, top 5) for its distinctive word, and 200 absent words for
 * false matches, at each confidence floor. Prints a Markdown table; the corpus and raw per-image
 * output go to bench/results/.
 *
 * Each engine reads in a child process of its own (this script with `--read`), so that its peak
 * RSS and event-loop gaps are its own, not the corpus generator's.
 *
 * `deno run -A bench/caption_quality.ts [--n 200] [--seed 1] [--engine js|debian|both]
 *   [--floors 30,40,50,60,70] [--max-width 1024]`
 * The search runs on a fresh database of its own (bench/_lib/databases.ts freshBenchDatabase).
 */
import { parseArgs } from "node:util";
import sharp from "sharp";
import { createSql } from "../db/client.ts";
import { migrate } from "../services/migrate.ts";
import { FsStore } from "../adapters/storage/fs.ts";
import { freshBenchDatabase } from "./_lib/databases.ts";
import {
  captionBands,
  CaptionReader,
  CONFIDENCE_FLOOR,
  enclosedPgm,
  readBands,
  type RecognizeTsv,
} from "../adapters/ocr/mod.ts";
import { captionCorpus, searchQuality, textFreePhotos } from "../tests/_harness/caption_corpus.ts";

// As in the service, where the thumbnail workers set them for the whole process.
sharp.concurrency(1);
sharp.cache(false);

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    n: { type: "string", default: "200" },
    seed: { type: "string", default: "1" },
    engine: { type: "string", default: "js" },
    floors: { type: "string", default: "30,40,50,60,70" },
    "max-width": { type: "string", default: "1024" },
    read: { type: "string" },
  },
});
const n = Number(args.n), seed = Number(args.seed);
const prep = {
  maxWidth: Number(args["max-width"]),
  minWidth: Math.min(800, Number(args["max-width"])),
};
const floors = args.floors.split(",").map(Number);
const dir = `bench/results/caption_corpus_n${n}_s${seed}`;
const resultFile = (engine: string) => `bench/results/text_quality_${engine}_n${n}_s${seed}.json`;

interface Row {
  name: string;
  caption: string;
  distinctive: string;
  ms: number;
  words: { text: string; conf: number; band: number }[];
}
interface Result {
  rows: Row[];
  startMs: number;
  gapFirst10: number;
  gap: number;
  peakMb: number;
  /** The OCR process's (js) or the tesseract CLI's (debian) peak RSS. */
  enginePeakMb: number;
  load: string;
}

const load = () => Deno.loadavg().map((l) => l.toFixed(2)).join(" ");
const pct = (a: number, b: number) => `${(100 * a / b).toFixed(1)}%`;
const quantile = (xs: number[], q: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];

/** The tesseract CLI on one picture (PGM on stdin), with its peak RSS from GNU time. */
let cliPeakKb = 0;
const debianRecognize: RecognizeTsv = async (picture) => {
  const child = new Deno.Command("/usr/bin/time", {
    args: ["-f", "%M", "tesseract", "stdin", "stdout", "-l", "eng", "--psm", "6", "--dpi", "300"]
      .concat(["-c", "debug_file=/dev/null", "tsv"]),
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  // The enclosed-region filter runs in the engine's thread for tesseract.js; here, inline.
  await writer.write(picture.enclosed ? enclosedPgm(picture.pgm, picture.enclosed) : picture.pgm);
  await writer.close();
  const out = await child.output();
  const stderr = new TextDecoder().decode(out.stderr).trim().split("\n");
  cliPeakKb = Math.max(cliPeakKb, Number(stderr.at(-1)) || 0);
  if (!out.success) throw new Error(`tesseract failed: ${stderr.join(" ")}`);
  return new TextDecoder().decode(out.stdout);
};

/** Child: reads the corpus in `dir` with one engine; the longest 1 ms timer gap meanwhile. */
async function read(engine: string): Promise<Result> {
  const meta: Omit<Row, "ms" | "words">[] = JSON.parse(
    await Deno.readTextFile(`${dir}/index.json`),
  );
  const floor = Math.min(...floors, CONFIDENCE_FLOOR);
  const started = performance.now();
  const reader = engine === "js"
    ? await CaptionReader.start({ confidenceFloor: floor, ...prep })
    : null;
  const startMs = performance.now() - started;
  let last = performance.now(), gap = 0, gapFirst10 = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 1);
  const rows: Row[] = [];
  for (const [i, m] of meta.entries()) {
    if (i === 10) gapFirst10 = gap;
    const bytes = await Deno.readFile(`${dir}/${m.name}`);
    const t = performance.now();
    const words = reader
      ? (await reader.read(bytes)).words
      : (await readBands(await captionBands(bytes, prep), debianRecognize, floor))
        .map(({ text, conf, band }) => ({ text, conf, band }));
    rows.push({ ...m, ms: performance.now() - t, words });
  }
  clearInterval(ticker);
  const hwm = async (pid: number | "self") =>
    Number((await Deno.readTextFile(`/proc/${pid}/status`)).match(/VmHWM:\s+(\d+)/)?.[1]) / 1024;
  let enginePeakMb = cliPeakKb / 1024;
  for (const pid of await reader?.pids() ?? []) {
    enginePeakMb = Math.max(enginePeakMb, await hwm(pid));
  }
  await reader?.close();
  return { rows, startMs, gapFirst10, gap, peakMb: await hwm("self"), enginePeakMb, load: load() };
}

if (args.read) {
  await Deno.writeTextFile(resultFile(args.read), JSON.stringify(await read(args.read), null, 1));
  Deno.exit(0);
}

// Parent: the corpus on disk (kept for a rerun and to look at), one child per engine, search.
try {
  await Deno.stat(`${dir}/index.json`);
} catch {
  await Deno.mkdir(dir, { recursive: true });
  const index = [];
  for await (const img of captionCorpus(n, seed)) {
    await Deno.writeFile(`${dir}/${img.name}`, img.bytes);
    index.push({ name: img.name, caption: img.caption, distinctive: img.distinctive });
  }
  // Photos without text, a quarter as many: recognition should find nothing on them.
  for await (const photo of textFreePhotos(Math.ceil(n / 4), seed)) {
    await Deno.writeFile(`${dir}/${photo.name}`, photo.bytes);
    index.push({ name: photo.name, caption: "", distinctive: "" });
  }
  await Deno.writeTextFile(`${dir}/index.json`, JSON.stringify(index, null, 1));
}
// The service's own search, on a database of its own (freshBenchDatabase, migrated).
const db = await freshBenchDatabase();
const objects = await Deno.makeTempDir({ prefix: "text-quality-" });
const sql = createSql(db.url, { max: 2, bounded: false });
await migrate(sql, new FsStore(objects));
const lines = [
  "| engine | floor | found in top 5 | false matches | text on text-free photos | median ms | p95 ms | peak RSS | load avg before -> after |",
  "| --- | --- | --- | --- | --- | --- | --- | --- | --- |",
];
for (const engine of args.engine === "both" ? ["js", "debian"] : [args.engine]) {
  const loadBefore = load();
  const child = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", import.meta.filename!, ...Deno.args, "--read", engine],
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!child.success) throw new Error(`reading with ${engine} failed`);
  const r: Result = JSON.parse(await Deno.readTextFile(resultFile(engine)));
  const times = r.rows.filter((row) => row.distinctive).map((row) => row.ms);
  const peak = `${r.peakMb.toFixed(0)} MB + ${engine === "js" ? "OCR process" : "CLI"} ` +
    `${r.enginePeakMb.toFixed(0)} MB`;
  for (const floor of floors) {
    const items = r.rows.map((row) => ({
      distinctive: row.distinctive,
      text: row.words.filter((w) => w.conf >= floor).map((w) => w.text).join(" "),
    }));
    const photos = items.filter((i) => !i.distinctive);
    const noisy = photos.filter((i) => i.text).length;
    const q = await searchQuality(sql, items);
    lines.push(
      `| ${engine} | ${floor} | ${pct(q.found, q.of)} (${q.found}/${q.of}) | ` +
        `${pct(q.falseMatches, q.absent)} (${q.falseMatches}/${q.absent}) | ` +
        `${pct(noisy, photos.length)} (${noisy}/${photos.length}) | ` +
        `${quantile(times, 0.5).toFixed(0)} | ${quantile(times, 0.95).toFixed(0)} | ${peak} | ` +
        `${loadBefore} -> ${r.load} |`,
    );
  }
  const captioned = r.rows.filter((row) => row.distinctive);
  const textAt = (row: Row, floor: number) =>
    row.words.filter((w) => w.conf >= floor).map((w) => w.text).join(" ").toLowerCase();
  const exact = captioned.filter((row) =>
    textAt(row, CONFIDENCE_FLOOR) === row.caption.toLowerCase()
  ).length;
  console.log(
    `${engine}: start ${r.startMs.toFixed(0)} ms; whole caption exact at floor ` +
      `${CONFIDENCE_FLOOR}: ${pct(exact, captioned.length)}; longest event-loop gap ` +
      `${r.gapFirst10.toFixed(1)} ms over the first 10 images, ${r.gap.toFixed(1)} ms over all`,
  );
}
await sql.end();
await db.drop();
await Deno.remove(objects, { recursive: true });
console.log(`\n${lines.join("\n")}\n`);
