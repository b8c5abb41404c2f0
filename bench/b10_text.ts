/**
 * B10: finding images by the words on them (issue 21), on the 1,000,000-image database with a
 * caption on every image (bench/seed_captions.ts), uncached (LISTING_CACHE_ENTRIES=0), at
 * concurrency 8, each request a different query as readers send them: one word drawn by the
 * vocabulary's Zipf-like popularity; the same with a tag drawn the same way; two words of a real
 * caption (an image's own, drawn at random); and a word with a recognition slip (approximate
 * matches only). The plain newest page on the same service is the baseline.
 */
import postgres from "postgres";
import {
  benchMain,
  databaseUrl,
  load,
  type LoadResult,
  ms,
  type Row,
  startService,
  x,
} from "./_lib.ts";
import { SEED_DB, TAGS } from "./seed.ts";
import { captionWord, seedCaptions, WORDS } from "./seed_captions.ts";

/** A deterministic stream of numbers in [0, 1) (mulberry32). */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A rank in 1..n drawn like the seed draws them (log-uniform, probability ~ 1/r). */
const zipf = (u: number, n: number) =>
  Math.min(n, Math.max(1, Math.floor(Math.exp(u * Math.log(n + 1)))));

const loadLine = (r: LoadResult) =>
  `${r.requests} req, ${r.rps.toFixed(0)} req/s${
    r.errors ? `, ${r.errors} errors: ${r.firstError}` : ""
  }`;

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

if (import.meta.main) {
  await benchMain("B10", "text search: the words on 1M captioned images", async (notes) => {
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
    const svc = await startService(databaseUrl(SEED_DB), null, { LISTING_CACHE_ENTRIES: "0" });
    const rows: Row[] = [];
    try {
      const r = random(42);
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
    } finally {
      await svc.stop();
    }
    return rows;
  });
}
