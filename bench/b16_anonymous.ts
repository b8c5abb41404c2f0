/**
 * B16: the worst case of every anonymous read (issue 39), at 1,000,000 images. For each
 * endpoint anyone may call without signing in, the shapes of request that cost it most: every
 * request a different URL, one at a time (what one client costs the board, not what queueing
 * for two cores adds), the listing cache off (LISTING_CACHE_ENTRIES=0). The table in
 * docs/reliability.md#limits is this benchmark's rows. Databases: `bench_1m` with its captions
 * (bench/seed_captions.ts) for listings, tags and pages; `bench_similar_1m` (bench/b11_similar.ts)
 * for near-duplicates, the duplicates page and search by image. The byte routes are B4's.
 */
import sharp from "sharp";
import postgres from "postgres";
import { benchMain, runParts } from "./_lib/bench_main.ts";
import { databaseUrl, prewarm } from "./_lib/databases.ts";
import { ms, type Row } from "./_lib/results.ts";
import { percentile } from "./_lib/stats.ts";
import { spawnBenchService } from "./_lib/service.ts";
import { SEED_DB, TAGS } from "./seed.ts";
import { captionWord, seedCaptions, WORDS } from "./seed_captions.ts";
import { seedPairs, seedSimilar, SIMILAR_DB } from "./b11_similar.ts";
import { MAX_DISTANCE } from "../domain/similar.ts";

/** Requests per shape. */
const REQUESTS = 150;

/** One shape of request: a name and the URL of request `i` (a different one each time). */
type Shape = [name: string, url: (i: number) => string];

/** An endpoint, its shapes, and what bounds its cost (the docs' words). */
interface Endpoint {
  endpoint: string;
  shapes: Shape[];
  bound: string;
  method?: "GET" | "POST";
  body?: (i: number) => BodyInit;
}

/** Latencies of `REQUESTS` requests one at a time; the status of any answer that is not 2xx. */
async function measure(base: string, e: Endpoint, url: (i: number) => string) {
  const times: number[] = [];
  const statuses = new Map<number, number>();
  for (let i = 0; i < REQUESTS; i++) {
    const t0 = performance.now();
    const res = await fetch(`${base}${url(i)}`, {
      method: e.method ?? "GET",
      body: e.body?.(i),
    });
    await res.arrayBuffer();
    times.push(performance.now() - t0);
    if (!res.ok) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
  }
  return {
    p50: percentile(times, 50),
    p99: percentile(times, 99),
    max: times.reduce((a, b) => Math.max(a, b), 0),
    statuses,
  };
}

/** A row per endpoint: its costliest shape by p99, with the others in the metric. */
async function rowsOf(base: string, endpoints: Endpoint[]): Promise<Row[]> {
  const rows: Row[] = [];
  for (const e of endpoints) {
    const results = [];
    for (const [name, url] of e.shapes) {
      await measure(base, e, url); // warm: the same shape's plans and the pool's connections
      results.push({ name, ...await measure(base, e, url) });
    }
    results.sort((a, b) => b.p99 - a.p99);
    const worst = results[0];
    const refused = [...worst.statuses].map(([s, n]) => `${n}x ${s}`).join(", ");
    rows.push({
      metric: `${e.endpoint}, worst of ${results.length} shape(s): ${worst.name}${
        results.length > 1
          ? ` (others: ${results.slice(1).map((r) => `${r.name} p99 ${ms(r.p99)}`).join("; ")})`
          : ""
      }`,
      value: `p50 ${ms(worst.p50)} / p99 ${ms(worst.p99)} / max ${ms(worst.max)}${
        refused ? ` (${refused})` : ""
      }`,
      baseline: e.bound,
      ratio: "-",
      target: "bounded",
      met: null,
    });
  }
  return rows;
}

/** A rank drawn from the whole range, different for each request. */
const spread = (i: number, n: number, salt = 7919) => 1 + ((i * salt) % n);

async function board(notes: string[]): Promise<Row[]> {
  const seeded = await seedCaptions();
  notes.push(seeded.seeded ? `captions of ${SEED_DB} seeded now` : `${SEED_DB} already seeded`);
  notes.push(
    `${SEED_DB} read into the file cache first (${await prewarm(databaseUrl(SEED_DB))} MB)`,
  );
  const sql = postgres(databaseUrl(SEED_DB), { max: 1, onnotice: () => {} });
  const ids = (await sql<{ short_id: string }[]>`
    select short_id from images tablesample system (0.1) limit ${REQUESTS}`).map((r) => r.short_id);
  await sql.end();
  const id = (i: number) => ids[i % ids.length];
  const svc = await spawnBenchService(databaseUrl(SEED_DB), null, { LISTING_CACHE_ENTRIES: "0" });
  try {
    const word = (i: number) => captionWord(spread(i, WORDS));
    const rare = (i: number) => captionWord(WORDS - (i % 500));
    return await rowsOf(svc.base, [
      {
        endpoint: "GET /api/v1/images (tags)",
        bound: "keyset walk, at most MAX_EXAMINED (10,000) rows read a page, then a cursor",
        shapes: [
          ["newest, limit 200", () => `/api/v1/images?limit=200`],
          [
            "two rare tags that seldom meet",
            (i) => `/api/v1/images?limit=200&tags=t${TAGS - (i % 500)},t${TAGS - 500 - (i % 500)}`,
          ],
          [
            "a popular tag and a rare one",
            (i) => `/api/v1/images?limit=200&tags=t1,t${TAGS - (i % 1000)}`,
          ],
          ["excluding the most common tag", (i) => `/api/v1/images?limit=200&tags=-t1,-t${2 + i}`],
          [
            "a rare tag excluding a popular one",
            (i) => `/api/v1/images?limit=200&tags=t${TAGS - (i % 1000)},-t1`,
          ],
        ],
      },
      {
        endpoint: "GET /api/v1/images?q= (captions)",
        bound:
          "GIN intersection or a bounded walk (db/caption_search_costs.ts); 8 words at most; " +
          "best match first ranks at most MAX_RELEVANCE_CANDIDATES",
        shapes: [
          ["one frequent word", (i) => `/api/v1/images?limit=200&q=${word(i)}`],
          [
            "best match first, one frequent word",
            (i) => `/api/v1/images?limit=200&sort=relevance&q=${word(i)}`,
          ],
          [
            "best match first, two words",
            (i) => `/api/v1/images?limit=200&sort=relevance&q=${word(i)}+${word(i + 31)}`,
          ],
          ["two rare words", (i) => `/api/v1/images?limit=200&q=${rare(i)}+${rare(i + 250)}`],
          ["a slip of a word", (i) => `/api/v1/images?limit=200&q=${word(i).slice(0, -1)}x`],
          [
            "a word and a rare tag",
            (i) => `/api/v1/images?limit=200&q=${word(i)}&tags=t${TAGS - (i % 1000)}`,
          ],
          [
            "eight words",
            (i) =>
              `/api/v1/images?limit=200&q=${
                Array.from({ length: 8 }, (_, k) => word(i + k * 97)).join("+")
              }`,
          ],
        ],
      },
      {
        endpoint: "GET /api/v1/images/{id}",
        bound: "one row by its unique short ID",
        shapes: [["a random image", (i) => `/api/v1/images/${id(i)}`]],
      },
      {
        endpoint: "GET /api/v1/tags",
        bound: "limit at most 1,000, offset at most 1,000,000; substring search by trigram index",
        shapes: [
          ["by count, limit 1000", () => `/api/v1/tags?sort=count_desc&limit=1000`],
          ["by name, deepest offset", () => `/api/v1/tags?limit=1000&offset=9000`],
          ["substring of one digit", (i) => `/api/v1/tags?q=${i % 10}&limit=1000`],
        ],
      },
      {
        endpoint: "GET /api/v1/tags/suggest",
        bound: "prefix and alias index, at most 50 answers",
        shapes: [
          ["one letter", () => `/api/v1/tags/suggest?q=t&limit=50`],
          ["an absent prefix", (i) => `/api/v1/tags/suggest?q=zz${i}&limit=50`],
        ],
      },
      {
        endpoint: "GET /api/v1/oembed",
        bound: "one image row",
        shapes: [
          [
            "an image page",
            (i) => `/api/v1/oembed?url=${encodeURIComponent(`${svc.base}/i/${id(i)}`)}`,
          ],
        ],
      },
      {
        endpoint: "GET /api/v1/health",
        bound: "a result at most 1 s old is reused; one check at a time",
        shapes: [["probe", () => `/api/v1/health`]],
      },
      {
        endpoint: "pages: / and /i/{id}",
        bound: "the listing's bounds; one image's row and tags",
        shapes: [
          [
            "library, a rare tag excluding a popular one",
            (i) => `/?tags=t${TAGS - (i % 1000)},-t1`,
          ],
          ["library, two rare words", (i) => `/?q=${rare(i)}+${rare(i + 250)}`],
          ["an image page", (i) => `/i/${id(i)}`],
          ["the tags page", () => `/tags`],
        ],
      },
    ]);
  } finally {
    await svc.stop();
  }
}

async function similar(notes: string[]): Promise<Row[]> {
  const seconds = await seedSimilar();
  if (seconds) notes.push(`seeded ${SIMILAR_DB} in ${seconds.toFixed(0)} s`);
  const sql = postgres(databaseUrl(SIMILAR_DB), { max: 1, onnotice: () => {} });
  await seedPairs(sql);
  const ids = (await sql<{ short_id: string }[]>`
    select short_id from images tablesample system (0.1) limit ${REQUESTS}`).map((r) => r.short_id);
  await sql.end();
  const id = (i: number) => ids[i % ids.length];
  // Search by image is limited per address a minute; the bench is one address asking on purpose.
  const svc = await spawnBenchService(databaseUrl(SIMILAR_DB), null, {
    QUERY_IMAGES_PER_MINUTE: "100000",
  });
  const jpeg = await sharp({
    create: { width: 640, height: 480, channels: 3, background: { r: 200, g: 90, b: 40 } },
  }).jpeg().toBuffer();
  try {
    return await rowsOf(svc.base, [
      {
        endpoint: "GET /api/v1/images/{id}/similar",
        bound: "multi-index hashing; distance and limit capped; read gate: 2 per address, 4 in all",
        shapes: [
          [
            `distance ${MAX_DISTANCE}, limit 100`,
            (i) => `/api/v1/images/${id(i)}/similar?max_distance=${MAX_DISTANCE}&limit=100`,
          ],
        ],
      },
      {
        endpoint: "GET /api/v1/duplicates",
        bound:
          "an index in the page's order (shared_tags kept on the pair); offset at most 10,000; read gate",
        shapes: [
          ["first page, limit 100", () => `/api/v1/duplicates?limit=100`],
          ["deepest offset, limit 100", () => `/api/v1/duplicates?limit=100&offset=10000`],
        ],
      },
      {
        endpoint: "POST /api/v1/images/search-by-image",
        method: "POST",
        body: () => {
          const form = new FormData();
          form.append("file", new File([jpeg], "q.jpg", { type: "image/jpeg" }));
          return form;
        },
        bound: "the file's size and pixel limits; QUERY_IMAGES_PER_MINUTE per address (30)",
        shapes: [
          [
            `a 640x480 JPEG, distance ${MAX_DISTANCE}`,
            () => `/api/v1/images/search-by-image?max_distance=${MAX_DISTANCE}`,
          ],
        ],
      },
    ]);
  } finally {
    await svc.stop();
  }
}

if (import.meta.main) {
  await benchMain(
    "B16",
    "the worst case of every anonymous read at 1M images",
    (notes) => runParts(notes, { board, similar }),
  );
}
