/**
 * B12: the tag features of issue 20. On the 1,000,000-image database (`deno task bench:seed`),
 * read-only: a listing with one positive and one excluded popular tag, uncached
 * (LISTING_CACHE_ENTRIES=0), against the plain newest page on the same service; and autocomplete
 * (`/tags/suggest`) for short and long, frequent and absent texts. On a fresh database of its own
 * (it writes): applying an implication to a tag on 100,000 images through the job queue, in
 * rows per second, with the health p99 of one back-to-back prober meanwhile, against the same
 * prober idle.
 */
import postgres from "postgres";
import { benchMain, runParts } from "./_lib/bench_main.ts";
import { freshBenchDatabase, prewarm } from "./_lib/databases.ts";
import { load, loadLine } from "./_lib/load.ts";
import { ms, perS, type Row, x } from "./_lib/results.ts";
import { percentile } from "./_lib/stats.ts";
import { signIn, spawnBenchService } from "./_lib/service.ts";
import { seed, SEED_DB } from "./seed.ts";
import { databaseUrl } from "./_lib/databases.ts";

const APPLY_IMAGES = 100_000;

/**
 * Latencies of `request` one at a time, 5 ms apart, until `done` settles (load() keeps every
 * latency and spreads them into Math.max, which overflows the stack past ~100,000).
 */
async function probe(request: () => Promise<Response>, done: Promise<unknown>) {
  let over = false;
  done.finally(() => (over = true));
  const latencies: number[] = [];
  let errors = 0;
  while (!over) {
    const t0 = performance.now();
    const res = await request().catch(() => null);
    await res?.arrayBuffer();
    if (!res?.ok) errors++;
    latencies.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 5));
  }
  return {
    requests: latencies.length,
    errors,
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: latencies.reduce((a, b) => Math.max(a, b), 0),
  };
}

/** p50/p99 of GET `path` at concurrency 8 on `base`. */
function hammer(base: string, path: string | ((i: number) => string)) {
  const url = (i: number) => `${base}${typeof path === "string" ? path : path(i)}`;
  return (async () => {
    await load({ concurrency: 8, durationMs: 500, maxRequests: 200 }, (i) => fetch(url(i)));
    return await load(
      { concurrency: 8, durationMs: 4000, maxRequests: 4000 },
      (i) => fetch(url(i)),
    );
  })();
}

async function reads(notes: string[]): Promise<Row[]> {
  const seeded = await seed();
  notes.push(seeded.seeded ? `seeded ${SEED_DB} now` : `${SEED_DB} already seeded`);
  const warmed = await prewarm(databaseUrl(SEED_DB));
  notes.push(
    `${SEED_DB} read into the file cache first (${warmed} MB; bench/_lib/databases.ts prewarm)`,
  );
  const svc = await spawnBenchService(databaseUrl(SEED_DB), null, { LISTING_CACHE_ENTRIES: "0" });
  const rows: Row[] = [];
  try {
    const newest = await hammer(svc.base, "/api/v1/images");
    for (const path of ["/api/v1/images?tags=t2,-t1", "/api/v1/images?tags=-t1"]) {
      const r = await hammer(svc.base, path);
      rows.push({
        metric: `GET ${path}, LISTING_CACHE_ENTRIES=0, concurrency 8 (${loadLine(r)})`,
        value: `p50 ${ms(r.p50)} / p99 ${ms(r.p99)}`,
        baseline: `newest page, same service: p99 ${ms(newest.p99)}`,
        ratio: x(r.p99 / newest.p99),
        target: "p99 < 20 ms",
        met: r.p99 < 20 && r.errors === 0,
      });
    }
    const texts = ["t1", "t12", "t999", "42", "x", "-t5"];
    for (const q of texts) {
      const path = `/api/v1/tags/suggest?q=${q}&limit=10`;
      const r = await hammer(svc.base, path);
      // One at a time: what is left once nothing queues for the two cores.
      const one = await load(
        { concurrency: 1, durationMs: 1500, maxRequests: 1000 },
        () => fetch(`${svc.base}${path}`),
      );
      rows.push({
        metric: `GET /api/v1/tags/suggest?q=${q}, concurrency 8 (${loadLine(r)})`,
        value: `p50 ${ms(r.p50)} / p99 ${ms(r.p99)} (concurrency 1: p99 ${ms(one.p99)})`,
        baseline: `newest page: p99 ${ms(newest.p99)}`,
        ratio: x(r.p99 / newest.p99),
        target: "p99 < 10 ms",
        met: r.p99 < 10 && r.errors === 0,
      });
    }
    // Every request a different text: what a person typing produces (3,000 distinct prefixes).
    const mixed = await hammer(
      svc.base,
      (i) => `/api/v1/tags/suggest?q=t${(i * 7919) % 3000}&limit=10`,
    );
    rows.push({
      metric: `GET /api/v1/tags/suggest, a different q each time, concurrency 8 (${
        loadLine(mixed)
      })`,
      value: `p50 ${ms(mixed.p50)} / p99 ${ms(mixed.p99)}`,
      baseline: `newest page: p99 ${ms(newest.p99)}`,
      ratio: x(mixed.p99 / newest.p99),
      target: "p99 < 10 ms",
      met: mixed.p99 < 10 && mixed.errors === 0,
    });
  } finally {
    await svc.stop();
  }
  return rows;
}

async function apply(notes: string[]): Promise<Row[]> {
  const db = await freshBenchDatabase();
  const svc = await spawnBenchService(db.url, null); // migrates, works the job queue
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    await sql.unsafe(`
      insert into images (short_id, hash, content_type, size_bytes, width, height)
        select lpad(to_hex(i), 8, '0'), md5(i::text) || md5('h' || i), 'image/png', 1000, 10, 10
        from generate_series(1, ${2 * APPLY_IMAGES}) i;
      insert into tags (name) select 'n' || r from generate_series(1, 100) r;
      insert into tags (name) values ('source');
      insert into image_tags (image_id, tag_id, image_seq)
        select i.id, t.id, i.seq from images i join tags t
          on t.name = 'n' || (1 + i.seq % 100) or (t.name = 'source' and i.seq % 2 = 0);
      analyze`);
    const health = () => fetch(`${svc.base}/api/v1/health`);
    const idle = await probe(health, new Promise((r) => setTimeout(r, 4000)));
    const auth = await signIn(svc.base);
    const started = performance.now();
    let finished = 0;
    const done = (async () => {
      while (true) {
        const [row] = await sql`select image_count from tags where name = 'implied'`;
        if (row?.image_count === APPLY_IMAGES) break;
        await new Promise((r) => setTimeout(r, 50));
      }
      finished = performance.now();
    })();
    const res = await fetch(`${svc.base}/api/v1/tag-implications/source`, {
      method: "PUT",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ implies: ["implied"] }),
    });
    if (res.status !== 201) throw new Error(`PUT implication: ${res.status} ${await res.text()}`);
    const busy = await probe(health, done);
    await done;
    const seconds = (finished - started) / 1000;
    notes.push(
      `implication applied to ${APPLY_IMAGES} images of 'source' (of ${2 * APPLY_IMAGES}) in ${
        seconds.toFixed(1)
      } s through the job queue; health probes ${idle.requests} idle, ${busy.requests} meanwhile ` +
        `(max ${ms(busy.max)}, errors ${busy.errors})`,
    );
    return [
      {
        metric: `applying an implication to a tag on ${APPLY_IMAGES} images (job queue, batches)`,
        value: perS(APPLY_IMAGES / seconds, "rows/s"),
        baseline: "-",
        ratio: "-",
        target: "-",
        met: null,
      },
      {
        metric: `health p99, one prober, while it runs (${busy.requests} req)`,
        value: `p50 ${ms(busy.p50)} / p99 ${ms(busy.p99)}`,
        baseline: `idle: p99 ${ms(idle.p99)}`,
        ratio: x(busy.p99 / idle.p99),
        target: "p99 < 20 ms",
        met: busy.p99 < 20 && busy.errors === 0,
      },
    ];
  } finally {
    await sql.end();
    await svc.stop();
    await db.drop();
  }
}

if (import.meta.main) {
  await benchMain(
    "B12",
    "tags: exclusion, autocomplete, implications",
    (notes) => runParts(notes, { reads, apply }),
  );
}
