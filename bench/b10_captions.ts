/**
 * B10: finding images by the words on them (issue 21), on the 1,000,000-image database with a
 * caption on every image (bench/seed_captions.ts), uncached (LISTING_CACHE_ENTRIES=0), at
 * concurrency 8, each request a different query as readers send them: one word drawn by the
 * vocabulary's Zipf-like popularity; the same with a tag drawn the same way; two words of a real
 * caption (an image's own, drawn at random); and a word with a recognition slip (approximate
 * matches only). The plain newest page on the same service is the baseline.
 *
 * And recognition keeping up with uploads (recognition(), below). `--search` or `--ocr` runs one
 * part.
 */
import postgres from "postgres";
import { benchMain, runParts } from "./_lib/bench_main.ts";
import { databaseUrl, freshBenchDatabase, prewarm } from "./_lib/databases.ts";
import { load, loadLine, type LoadResult } from "./_lib/load.ts";
import { ms, type Row, x } from "./_lib/results.ts";
import { percentile, zipf } from "./_lib/stats.ts";
import { probeWhile } from "./_lib/prober.ts";
import { mulberry32 } from "../tests/_harness/random.ts";
import { signIn, spawnBenchService, startBenchS3 } from "./_lib/service.ts";
import { uploadNew } from "./_lib/uploads.ts";
import { captionCorpus, type CaptionImage } from "../tests/_harness/caption_corpus.ts";
import { SEARCH_SETTINGS } from "../db/client.ts";
import { searchImagesByCaption } from "../db/caption_search.ts";
import { queryWords } from "../domain/caption_text.ts";
import { explainCase, type PlanCase } from "./_lib/plans.ts";
import { SEED_DB, TAGS } from "./seed.ts";
import { captionWord, seedCaptions, WORDS } from "./seed_captions.ts";

/** p50/p99 of GET `path(i)` at concurrency 8, after a short warm-up of other requests. */
async function hammer(base: string, path: (i: number) => string): Promise<LoadResult> {
  await load(
    { concurrency: 8, durationMs: 500, maxRequests: 200 },
    (i) => fetch(`${base}${path(i + 1e6)}`),
  );
  return await load(
    { concurrency: 8, durationMs: 5000, maxRequests: 3000 },
    (i) => fetch(`${base}${path(i)}`),
  );
}

/** Uploads per second of the recognition run, and how long it lasts. */
const OCR_RATE = 2;
const OCR_SECONDS = 20;

/**
 * Recognition keeping up: captioned JPEGs (tests/_harness/caption_corpus.ts, 300-2000 px)
 * uploaded at OCR_RATE a second for OCR_SECONDS to a fresh service with the real recogniser,
 * while health is probed every 10 ms from a process of its own; each image's time from its upload
 * to its text, and health against the same prober idle.
 */
async function recognition(notes: string[]): Promise<Row[]> {
  const db = await freshBenchDatabase();
  const s3 = await startBenchS3();
  const svc = await spawnBenchService(db.url, s3);
  try {
    const auth = await signIn(svc.base);
    const images: CaptionImage[] = [];
    for await (const image of captionCorpus(OCR_RATE * OCR_SECONDS, 11)) images.push(image);
    // The recogniser starts with the first job (lazily): warm it before measuring.
    const first = await uploadNew(svc.base, auth, images.pop()!.bytes);
    await textOf(svc.base, first, 120_000);
    const idle = await probeWhile(svc.base, () => new Promise((r) => setTimeout(r, 5000)));
    const sent: { id: string; at: number }[] = [];
    const read = new Map<string, number>();
    const busy = await probeWhile(svc.base, async () => {
      const started = performance.now();
      let uploaded = false;
      const uploads = Promise.all(
        images.map((image, i) =>
          new Promise((r) => setTimeout(r, (i * 1000) / OCR_RATE)).then(async () => {
            const at = performance.now();
            const id = await uploadNew(svc.base, auth, image.bytes);
            sent.push({ id, at });
          })
        ),
      ).finally(() => uploaded = true);
      // Every 250 ms, from the first upload until every text is in (or 120 s after the last).
      const deadline = started + (images.length / OCR_RATE) * 1000 + 120_000;
      while ((!uploaded || read.size < sent.length) && performance.now() < deadline) {
        for (const { id } of [...sent]) {
          if (!read.has(id) && (await textOf(svc.base, id, 0)) !== null) {
            read.set(id, performance.now());
          }
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      await uploads;
      notes.push(
        `recognition: ${sent.length} uploads at ${OCR_RATE}/s, ${read.size} texts read, the last ${
          ((performance.now() - started) / 1000).toFixed(1)
        } s after the first upload`,
      );
    });
    const lags = sent.filter((s) => read.has(s.id)).map((s) => read.get(s.id)! - s.at);
    const lastUpload = Math.max(...sent.map((s) => s.at));
    const lastText = Math.max(...read.values());
    const drain = (lastText - lastUpload) / 1000;
    return [
      {
        metric: `upload to text, ${sent.length} captioned JPEGs uploaded at ${OCR_RATE}/s`,
        value: `p50 ${ms(percentile(lags, 50))} / p95 ${ms(percentile(lags, 95))}`,
        baseline: `backlog drained ${drain.toFixed(1)} s after the last upload`,
        ratio: "-",
        target: "keeps up with 2 uploads/s",
        met: read.size === sent.length && drain < 10,
      },
      {
        metric: `health p99, probed every 10 ms, while recognising`,
        value: `p50 ${ms(percentile(busy.latencies, 50))} / p99 ${
          ms(percentile(busy.latencies, 99))
        }`,
        baseline: `idle: p99 ${ms(percentile(idle.latencies, 99))}`,
        ratio: x(percentile(busy.latencies, 99) / percentile(idle.latencies, 99)),
        target: "p99 < 20 ms",
        met: percentile(busy.latencies, 99) < 20 && busy.errors === 0,
      },
    ];
  } finally {
    await svc.stop();
    await s3.stop();
    await db.drop();
  }
}

/** The image's text, waiting up to `waitMs` for it (null when there is none yet). */
async function textOf(base: string, id: string, waitMs: number): Promise<string | null> {
  const deadline = performance.now() + waitMs;
  for (;;) {
    const res = await fetch(`${base}/api/v1/images/${id}`);
    const { text } = await res.json();
    if (text !== null || performance.now() >= deadline) return text;
    await new Promise((r) => setTimeout(r, 200));
  }
}

if (import.meta.main) {
  await benchMain(
    "B10",
    "text search and caption recognition",
    (notes) => runParts(notes, { search, ocr: recognition }),
  );
}

/** The searches at a million captioned images. */
async function search(notes: string[]): Promise<Row[]> {
  const seeded = await seedCaptions();
  notes.push(
    seeded.seeded
      ? `captions seeded now in ${seeded.seconds.toFixed(0)} s`
      : "captions already seeded",
  );
  const sql = postgres(databaseUrl(SEED_DB), { max: 1, onnotice: () => {} });
  const [facts] = await sql`
    select (select count(*) from caption_words)::int as words,
           (select count(*) from image_words)::int as links,
           pg_size_pretty(pg_total_relation_size('image_words')) as links_size,
           pg_size_pretty(pg_total_relation_size('caption_words')) as words_size`;
  // Two words of real captions, as a reader remembers a phrase.
  const phrases = (await sql<{ text: string }[]>`
    select text from images tablesample system (0.2) repeatable (7) where text like '% %' limit 3000`)
    .map((r) => r.text.toLowerCase().split(" ").slice(0, 2).join(" "));
  await sql.end();
  notes.push(
    `data: 1,000,000 captioned images, ${facts.words} distinct words (of ${WORDS}, the rest ` +
      `slips), ${facts.links} word links (${facts.links_size}; dictionary ${facts.words_size})`,
  );
  const warmed = await prewarm(databaseUrl(SEED_DB));
  notes.push(
    `${SEED_DB} read into the file cache first (${warmed} MB; bench/_lib/databases.ts prewarm)`,
  );
  const svc = await spawnBenchService(databaseUrl(SEED_DB), null, { LISTING_CACHE_ENTRIES: "0" });
  const rows: Row[] = [];
  try {
    const r = mulberry32(42);
    const draws = Array.from({ length: 8000 }, () => [r(), r(), r()]);
    const word = (i: number) => captionWord(zipf(draws[i % draws.length][0], WORDS));
    const newest = await hammer(svc.base, () => "/api/v1/images");
    const shapes: [string, (i: number) => string][] = [
      ["one word, Zipf-drawn", (i) => `/api/v1/images?q=${word(i)}`],
      [
        "one word and one tag, each Zipf-drawn",
        (i) => `/api/v1/images?q=${word(i)}&tags=t${zipf(draws[i % draws.length][1], TAGS)}`,
      ],
      [
        "two words of a real caption",
        (i) => `/api/v1/images?q=${encodeURIComponent(phrases[i % phrases.length])}`,
      ],
      [
        "one word with a recognition slip (approximate matches)",
        (i) => `/api/v1/images?q=${word(i).slice(0, -1)}x`,
      ],
    ];
    for (const [name, path] of shapes) {
      const res = await hammer(svc.base, path);
      rows.push({
        metric: `GET /api/v1/images?q=…, ${name}, LISTING_CACHE_ENTRIES=0, concurrency 8 (${
          loadLine(res)
        })`,
        value: `p50 ${ms(res.p50)} / p99 ${ms(res.p99)}`,
        baseline: `newest page, same service: p99 ${ms(newest.p99)}`,
        ratio: x(res.p99 / newest.p99),
        target: "p99 < 20 ms",
        met: res.p99 < 20 && res.errors === 0,
      });
    }
    notes.push(await writePlans(phrases[0]));
  } finally {
    await svc.stop();
  }
  return rows;
}

/**
 * bench/plans/caption_*.txt: the generic plans of one word, two words, and a word with a tag
 * whose counts are close (merged) and far apart, so that a plan that changes at a
 * million images shows in a diff (the tests' small database plans differently).
 */
async function writePlans(phrase: string): Promise<string> {
  const url = databaseUrl(SEED_DB);
  const admin = postgres(url, { max: 1, onnotice: () => {} });
  const pick = async (near: boolean) => {
    const [row] = await admin<{ word: string; tag: string }[]>`
      select w.word, t.name as tag from caption_words w cross join lateral (
        select name from tags t
        where ${
      near
        ? admin`t.image_count between w.image_count / 3 and w.image_count * 3`
        : admin`t.image_count * 25 < w.image_count`
    }
        order by t.image_count desc, t.id limit 1) t
      where w.image_count between ${near ? 2000 : 30000} and ${near ? 6000 : 60000}
      order by w.image_count desc, w.id limit 1`;
    return row;
  };
  const near = await pick(true);
  const far = await pick(false);
  await admin.end();
  const search = (words: string[], tags: string[]) => (sql: postgres.Sql) =>
    searchImagesByCaption(sql as never, { words, tags, exclude: [], limit: 51, after: null });
  const q = (words: string[], tags: string[] = []) =>
    `/api/v1/images?q=${encodeURIComponent(words.join(" "))}${
      tags.length ? `&tags=${tags.join(",")}` : ""
    }`;
  const cases: PlanCase[] = [
    [[near.word], []],
    [queryWords(phrase), []],
    [[near.word], [near.tag]],
    [[far.word], [far.tag]],
  ].map(([words, tags], i) => ({
    name: [
      "caption_one_word",
      "caption_two_words",
      "caption_word_tag_merged",
      "caption_word_tag_far",
    ][i],
    path: q(words, tags),
    sql: search(words, tags),
  }));
  const dir = new URL("./plans/", import.meta.url);
  const settings = { ...SEARCH_SETTINGS, plan_cache_mode: "force_generic_plan" };
  for (const c of cases) {
    await Deno.writeTextFile(new URL(`${c.name}.txt`, dir), await explainCase(url, c, settings));
  }
  return `plans: bench/plans/caption_*.txt (the generic plans of ${
    cases.map((c) => c.path).join(", ")
  }, on the search pool's settings)`;
}
