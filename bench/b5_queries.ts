/**
 * B5: latency of the read queries on the 1,000,000-image database (`deno task bench:seed`),
 * through the service's HTTP API at concurrency 8, as readers ask for them (issue 23): each
 * listing shape is a mix of requests, every one a different URL drawn from a seeded PRNG the way
 * the seed draws its data (tags Zipf-like, cursors uniform, caption words as B10 draws them),
 * with the listing cache on (the default) and off (LISTING_CACHE_ENTRIES=0, a second service),
 * each with the CPU per request of the service, all PostgreSQL processes and the load generator.
 * The old rows, one URL repeated (served from the listing cache after the first request), stay as
 * diagnostics; each one's SQL (captured from the same db/ functions the read model calls, with
 * postgres.js `debug`) is run under EXPLAIN (ANALYZE, BUFFERS) and saved in
 * bench/plans/<case>.txt. Last, writes at a million images: an upload, a tag edit and a delete,
 * alone and during a cache-off mixed listing load at concurrency 4.
 *
 * `--smoke`: everything with tiny counts (and the plans in a temporary folder), to check the
 * script end to end; its figures mean nothing.
 *
 * `--images N` (`deno task bench:b5 --images 10000000`): the same on the kept database of N
 * images instead (bench/seed.ts, bench_10m; seeded first if needed), cursors drawn up to N. Such
 * a run is not part of `deno task bench`, so it records itself: its section `## B5-10M …` in
 * bench/RESULTS.md (see recordAlone()). The caption-word shape needs that database's captions
 * (`deno run -A bench/seed_captions.ts --images N`) and is left out without them.
 */
import postgres from "postgres";
import { listImages } from "../db/images.ts";
import { listTags } from "../db/tags.ts";
import { encodeCursor } from "../services/read_model.ts";
import type { ListTagsQuery } from "../domain/types.ts";
import { benchMain } from "./_lib/bench_main.ts";
import { type BenchResult, markdownRows, ms, type Row, x } from "./_lib/results.ts";
import { cpuMs } from "./_lib/machine.ts";
import { databaseUrl, prewarm } from "./_lib/databases.ts";
import { load, loadLine } from "./_lib/load.ts";
import { percentile, randomHex, zipf } from "./_lib/stats.ts";
import { photoJpeg, withComment } from "../tests/_harness/photos.ts";
import { mulberry32 } from "../tests/_harness/random.ts";
import { LOCK_FLAG, ROOT } from "./_lib/processes.ts";
import { type BenchService, signIn, spawnBenchService } from "./_lib/service.ts";
import { uploadNew } from "./_lib/uploads.ts";
import { explainCase, type PlanCase } from "./_lib/plans.ts";
import { IMAGES, imagesArg, scaleName, seed, seedDb, TAGS } from "./seed.ts";
import { captionWord, seedCaptions, WORDS } from "./seed_captions.ts";

const SMOKE = Deno.args.includes("--smoke");
/** `--images N`: the kept database of N images (bench/seed.ts); a million by default. */
const N = imagesArg();
const SEED_DB = seedDb(N);
/** N for people: 1M, 10M, 20K. */
const SCALE = scaleName(N).toUpperCase();
/** The result's id: B5 at a million images (`deno task bench`), else B5-10M, B5-20K, … */
const ID = N === IMAGES ? "B5" : `B5-${SCALE}`;
const TITLE = `read queries on ${N.toLocaleString("en-US")} images, concurrency 8`;

/** How much of everything: the real run, or `--smoke`'s tiny counts. */
const COUNTS = SMOKE
  ? {
    mix: { requests: 40, ms: 2000 },
    single: { requests: 20, ms: 500 },
    warm: { requests: 16, ms: 300 },
    diagnostic: { requests: 40, ms: 1000 },
    writes: 3,
  }
  : {
    /** Each mixed shape at concurrency 8, per mode. */
    mix: { requests: 1200, ms: 6000 },
    /** The same at concurrency 1 (the baseline column). */
    single: { requests: 1000, ms: 1500 },
    warm: { requests: 200, ms: 500 },
    /** The repeated-URL diagnostics, as B5 measured them before issue 23. */
    diagnostic: { requests: 4000, ms: 4000 },
    /** Uploads, tag edits and deletes, alone and during listings. */
    writes: 30,
  };

const PLANS_DIR = SMOKE || N !== IMAGES
  ? new URL(`file://${await Deno.makeTempDir({ prefix: "b5-plans-" })}/`)
  : new URL("./plans/", import.meta.url);

/**
 * One listing shape as readers ask for it: `draw(r)` is a request's path, drawn with `r`.
 * Only the newest page is one fixed URL.
 */
interface Shape {
  name: string;
  /** The URL's form, for the table. */
  form: string;
  draw: (r: () => number) => string;
}

/** A tag of rank 1..TAGS, drawn as the seed draws them (probability ~ 1/rank). */
const tag = (r: () => number) => zipf(r(), TAGS);
/** Two distinct tags drawn that way. */
function twoTags(r: () => number): [number, number] {
  const a = tag(r);
  for (;;) {
    const b = tag(r);
    if (b !== a) return [a, b];
  }
}

const SHAPES: Shape[] = [
  { name: "newest", form: "/api/v1/images", draw: () => "/api/v1/images" },
  {
    name: "one tag",
    form: "/api/v1/images?tags=t{r}",
    draw: (r) => `/api/v1/images?tags=t${tag(r)}`,
  },
  {
    name: "two tags",
    form: "/api/v1/images?tags=t{a},t{b}",
    draw: (r) => `/api/v1/images?tags=${twoTags(r).map((t) => `t${t}`).join(",")}`,
  },
  {
    name: "tag and excluded tag",
    form: "/api/v1/images?tags=t{a},-t{b}",
    draw: (r) => {
      const [a, b] = twoTags(r);
      return `/api/v1/images?tags=t${a},-t${b}`;
    },
  },
  {
    name: "deep cursor",
    form: `/api/v1/images?cursor={after seq 1..${SCALE}}`,
    draw: (r) => `/api/v1/images?cursor=${encodeCursor(String(1 + Math.floor(r() * N)))}`,
  },
  {
    name: "tag search",
    form: "/api/v1/tags?q={1-2 digits}",
    draw: (r) => {
      const digits = r() < 0.5 ? 1 : 2;
      return `/api/v1/tags?q=${
        Array.from({ length: digits }, () => Math.floor(r() * 10)).join("")
      }`;
    },
  },
  { name: "library page", form: "/?tags=t{r}", draw: (r) => `/?tags=t${tag(r)}` },
  {
    name: "caption word",
    form: "/api/v1/images?q={word}",
    draw: (r) => `/api/v1/images?q=${captionWord(zipf(r(), WORDS))}`,
  },
];

/** What the API passes down for a page: limit + 1 rows, tags as given. */
const page = (tags: string[], beforeSeq: string | null = null) => (sql: postgres.Sql) =>
  listImages(sql, { tags, limit: 51, beforeSeq });
const tagList = (q: Partial<ListTagsQuery>) => (sql: postgres.Sql) =>
  listTags(sql, { sort: "name", limit: 100, offset: 0, ...q });

/** Pids of every process named postgres (the server and its backends). */
async function postgresPids(): Promise<number[]> {
  const out: number[] = [];
  for await (const e of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    const comm = await Deno.readTextFile(`/proc/${e.name}/comm`).catch(() => "");
    if (comm.trim() === "postgres") out.push(Number(e.name));
  }
  return out;
}

/** CPU ms of `pids` together (gone processes count as 0). */
async function sumCpu(pids: number[]): Promise<number> {
  const all = await Promise.all(pids.map((p) => cpuMs(p).catch(() => 0)));
  return all.reduce((a, b) => a + b, 0);
}

/** CPU ms used so far by the service, all postgres processes and this process. */
async function cpuNow(svc: BenchService, pgPids: number[]): Promise<number[]> {
  return [await cpuMs(svc.pid), await sumCpu(pgPids), await cpuMs(Deno.pid)];
}

/**
 * GET `path(i)` at concurrency 8 on `svc` after a warm-up of `warm(i)` (which opens the service's
 * database connections), with its CPU per request (service / all postgres / load generator), and
 * then `single(i)` at concurrency 1: what is left once nothing queues for the two cores.
 */
async function measure(
  svc: BenchService,
  paths: {
    main: (i: number) => string;
    warm: (i: number) => string;
    single: (i: number) => string;
  },
  main: { requests: number; ms: number },
) {
  const get = (path: (i: number) => string) => (i: number) => fetch(`${svc.base}${path(i)}`);
  const { warm, single } = COUNTS;
  await load({ concurrency: 8, durationMs: warm.ms, maxRequests: warm.requests }, get(paths.warm));
  const pgPids = await postgresPids();
  const cpu0 = await cpuNow(svc, pgPids);
  const r = await load(
    { concurrency: 8, durationMs: main.ms, maxRequests: main.requests },
    get(paths.main),
  );
  const cpu1 = await cpuNow(svc, pgPids);
  const cpu = cpu1.map((v, i) => ((v - cpu0[i]) / Math.max(1, r.requests)).toFixed(2));
  const one = await load(
    { concurrency: 1, durationMs: single.ms, maxRequests: single.requests },
    get(paths.single),
  );
  return { r, one, cpu };
}

/** A shape's requests: a stream of draws from `seed` (the same URLs in both modes). */
function drawn(shape: Shape, seed: number): (i: number) => string {
  const r = mulberry32(seed);
  return () => shape.draw(r);
}

/** The mixed `shapes` on `svc`, one row each. */
async function mixRows(
  svc: BenchService,
  shapes: Shape[],
  mode: string,
  target: boolean,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const shape of shapes) {
    // Seeded by the shape's place in SHAPES: the same URLs whichever shapes are left out.
    const k = SHAPES.indexOf(shape);
    const { r, one, cpu } = await measure(svc, {
      main: drawn(shape, 1000 + k),
      warm: drawn(shape, 2000 + k),
      single: drawn(shape, 3000 + k),
    }, COUNTS.mix);
    rows.push({
      metric: `mix, ${shape.name}, ${mode}: GET ${shape.form} (${loadLine(r)}; CPU ms/req ` +
        `${cpu[0]} service / ${cpu[1]} postgres / ${cpu[2]} load generator)`,
      value: `p50 ${ms(r.p50)} / p99 ${ms(r.p99)}`,
      baseline: `concurrency 1: p50 ${ms(one.p50)} / p99 ${ms(one.p99)}`,
      ratio: "-",
      target: target ? "p99 < 20 ms" : "-",
      met: target ? r.p99 < 20 && r.errors === 0 : null,
    });
  }
  return rows;
}

/** The repeated-URL cases on `svc`, one diagnostic row each. */
async function diagnosticRows(
  svc: BenchService,
  cases: PlanCase[],
  mode: string,
): Promise<Row[]> {
  const rows: Row[] = [];
  for (const c of cases) {
    const path = () => c.path;
    const { r, one, cpu } = await measure(
      svc,
      { main: path, warm: path, single: path },
      COUNTS.diagnostic,
    );
    rows.push({
      metric: `diagnostic: one URL repeated, ${c.name}, ${mode}: GET ${
        c.path.replace(/cursor=[^&]+/, "cursor=…")
      } (${loadLine(r)}; CPU ms/req ${cpu[0]} service / ${cpu[1]} postgres / ${
        cpu[2]
      } load generator)`,
      value: `p50 ${ms(r.p50)} / p99 ${ms(r.p99)}`,
      baseline: `concurrency 1: p50 ${ms(one.p50)} / p99 ${ms(one.p99)}`,
      ratio: "-",
      target: "- (diagnostic)",
      met: null,
    });
  }
  return rows;
}

/** Durations (ms) of each write. */
interface WriteTimes {
  upload: number[];
  edit: number[];
  delete: number[];
}

/**
 * `n` uploads of small JPEGs (new images), `n` tag edits (add of a Zipf-drawn tag the image does
 * not have, on seeded images from `sample`; removed again right after, untimed, and checked) and
 * `n` deletes of the images uploaded here, one at a time.
 */
async function writes(
  svc: BenchService,
  auth: Record<string, string>,
  sql: postgres.Sql,
  sample: string[],
  n: number,
  seed: number,
): Promise<WriteTimes> {
  const times: WriteTimes = { upload: [], edit: [], delete: [] };
  const timed = async <T>(into: number[], fn: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const out = await fn();
    into.push(performance.now() - t0);
    return out;
  };
  // A different photo each, and bytes no earlier run left behind (an upload must be new: 201).
  const jpegs = await Promise.all(
    Array.from(
      { length: n },
      async (_, i) => withComment(await photoJpeg(160, 120, seed + i), `b5 ${randomHex()}`),
    ),
  );
  const mine: string[] = [];
  const r = mulberry32(seed);
  try {
    for (const jpeg of jpegs) {
      mine.push(await timed(times.upload, () => uploadNew(svc.base, auth, jpeg)));
    }
    for (let i = 0; i < n; i++) {
      const id = sample[(seed + i) % sample.length];
      const before = await tagsOf(sql, id);
      let t: string;
      do t = `t${tag(r)}`; while (before.includes(t));
      const patch = async (body: unknown) => {
        const res = await fetch(`${svc.base}/api/v1/images/${id}/tags`, {
          method: "PATCH",
          headers: { ...auth, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        await res.arrayBuffer();
        if (res.status !== 200) {
          throw new Error(`PATCH ${id} ${JSON.stringify(body)}: ${res.status}`);
        }
      };
      try {
        await timed(times.edit, () => patch({ add: [t] }));
      } finally {
        await patch({ remove: [t] });
      }
      const after = await tagsOf(sql, id);
      if (after.join() !== before.join()) {
        throw new Error(`image ${id}: tags ${before} became ${after} after the edit's undo`);
      }
    }
    while (mine.length) {
      const id = mine[0];
      await timed(times.delete, async () => {
        const res = await fetch(`${svc.base}/api/v1/images/${id}`, {
          method: "DELETE",
          headers: auth,
        });
        await res.arrayBuffer();
        if (res.status !== 204) throw new Error(`DELETE ${id}: ${res.status}`);
      });
      mine.shift();
    }
  } finally {
    // A failure half-way leaves no upload of ours behind.
    for (const id of mine) {
      await fetch(`${svc.base}/api/v1/images/${id}`, { method: "DELETE", headers: auth })
        .then((res) => res.arrayBuffer()).catch(() => {});
    }
  }
  return times;
}

/** The tag names of image `shortId`, sorted. */
async function tagsOf(sql: postgres.Sql, shortId: string): Promise<string[]> {
  const rows = await sql<{ name: string }[]>`
    select t.name from images i join image_tags it on it.image_id = i.id
    join tags t on t.id = it.tag_id where i.short_id = ${shortId} order by t.name`;
  return rows.map((r) => r.name);
}

/** Rows of the writes alone and during a mixed cache-off listing load at concurrency 4. */
async function writeRows(
  svc: BenchService,
  sql: postgres.Sql,
  shapes: Shape[],
  notes: string[],
): Promise<Row[]> {
  const auth = await signIn(svc.base);
  // 0.1% of the pages, more below a million images: 0.1% of 20,000 images' pages can be none.
  const percent = Math.min(100, 0.1 * Math.max(1, IMAGES / N));
  const sample = (await sql<{ short_id: string }[]>`
    select short_id from images tablesample system (${percent}) repeatable (23)
    where seq <= ${N} limit 200`).map((r) => r.short_id);
  if (sample.length === 0) throw new Error(`no seeded image in the tablesample of ${SEED_DB}`);
  const n = COUNTS.writes;
  const alone = await writes(svc, auth, sql, sample, n, 100);
  // The listings: every request one of the shapes, at random, each drawn as above.
  const r = mulberry32(4);
  const listingPath = () => shapes[Math.floor(r() * shapes.length)].draw(r);
  const writing = (async () => {
    await new Promise((ok) => setTimeout(ok, 500)); // the listing load under way first
    return await writes(svc, auth, sql, sample, n, 200);
  })();
  const [listings, during] = await Promise.all([
    load(
      { concurrency: 4, durationMs: 600_000, until: writing },
      () => fetch(`${svc.base}${listingPath()}`),
    ),
    writing,
  ]);
  const p = (v: number[]) => `p50 ${ms(percentile(v, 50))} / p99 ${ms(percentile(v, 99))}`;
  const op = (label: string, key: keyof WriteTimes): Row => ({
    metric:
      `${label} on ${SCALE} images, ${n} one at a time, p50/p99, during mixed listings vs alone`,
    value: `during: ${p(during[key])}`,
    baseline: `alone: ${p(alone[key])}`,
    ratio: x(percentile(during[key], 99) / percentile(alone[key], 99)),
    target: "-",
    met: null,
  });
  notes.push(
    `writes: LISTING_CACHE_ENTRIES=0 service, signed in; upload = POST /api/v1/images of a ` +
      `160x120 JPEG (a new image, 201); tag edit = PATCH /api/v1/images/{id}/tags {add: [t{r}]}, ` +
      `r Zipf-drawn and not already on the image, on seeded images sampled with tablesample ` +
      `(the tag is removed again right after, untimed, and the image's tags checked unchanged); ` +
      `delete = DELETE of an image uploaded here (seeded images are never deleted); during = ` +
      `while the mix of all listing shapes (one drawn per request) ran at concurrency 4; with ` +
      `${n} writes each, p99 is the slowest; each upload's caption recognition job runs in the ` +
      `service meanwhile, as in production (the jobs of deleted images end at once)`,
  );
  return [
    op("upload", "upload"),
    op("tag edit", "edit"),
    op("delete", "delete"),
    {
      metric: `mixed listings (every shape, one drawn per request), LISTING_CACHE_ENTRIES=0, ` +
        `concurrency 4, during the writes (${loadLine(listings)})`,
      value: `p50 ${ms(listings.p50)} / p99 ${ms(listings.p99)}`,
      baseline: "-",
      ratio: "-",
      target: "- (diagnostic)",
      met: null,
    },
  ];
}

/**
 * Seeds what is missing: bench_1m and its captions, or at another size the images only (B5 seeds
 * captions for bench_1m alone; `bench/seed_captions.ts --images N` does it for the others).
 * Whether the database has captions.
 */
async function prepare(notes: string[]): Promise<boolean> {
  if (N === IMAGES) {
    const seeded = await seedCaptions(); // seeds bench_1m first if needed
    notes.push(
      seeded.seeded
        ? `seeded ${SEED_DB}'s captions now (${seeded.seconds.toFixed(0)} s)`
        : `${SEED_DB} and its captions already seeded (kept between runs; 'deno task ` +
          `bench:seed --force' reseeds)`,
    );
    return true;
  }
  const seeded = await seed(false, N);
  notes.push(
    seeded.seeded
      ? `seeded ${SEED_DB} now (${seeded.seconds.toFixed(0)} s)`
      : `${SEED_DB} already seeded (kept between runs; 'deno task bench:seed --images ${N} ` +
        `--force' reseeds)`,
  );
  const sql = postgres(databaseUrl(SEED_DB), { max: 1, onnotice: () => {} });
  try {
    const [{ done }] = await sql`select to_regclass('bench_captions_done') is not null as done`;
    notes.push(
      done
        ? `${SEED_DB}'s captions seeded by 'deno run -A bench/seed_captions.ts --images ${N}'`
        : `no caption-word rows: ${SEED_DB} has no captions (B5 seeds them for bench_1m only; ` +
          `'deno run -A bench/seed_captions.ts --images ${N}' does, then B5 includes them)`,
    );
    return done;
  } finally {
    await sql.end();
  }
}

/** `md` with its section headed `## {id} …` replaced by `section`, else `section` appended. */
function withSection(md: string, id: string, section: string): string {
  const lines = md.split("\n");
  const start = lines.findIndex((l) => l.startsWith(`## ${id} `));
  if (start < 0) return `${md.trimEnd()}\n\n${section}`;
  const next = lines.findIndex((l, i) => i > start && l.startsWith("## "));
  return [...lines.slice(0, start), section, ...lines.slice(next < 0 ? lines.length : next)]
    .join("\n");
}

/**
 * A run at another size than `deno task bench`'s (which runs B5 at a million images only) keeps
 * its own section in bench/RESULTS.md, `## B5-10M read queries on 10,000,000 images, …`: it runs
 * itself again with `--json` (as bench/run.ts runs each benchmark) and puts that report in place
 * of the section's previous run, else at the end of the file. The end is below the first
 * `## Notes` heading, from which `deno task bench` carries the file over unchanged
 * (bench/_lib/notes.ts), so the full run keeps the section. A run without figures leaves the file
 * alone.
 */
async function recordAlone(): Promise<void> {
  const json = await Deno.makeTempFile({ prefix: "b5-", suffix: ".json" });
  const t0 = performance.now();
  const { code } = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      LOCK_FLAG,
      new URL(import.meta.url).pathname,
      ...Deno.args,
      "--json",
      json,
    ],
    cwd: ROOT.pathname,
    stdin: "null",
  }).spawn().status;
  const seconds = (performance.now() - t0) / 1000;
  const r = await Deno.readTextFile(json).then((t) => JSON.parse(t) as BenchResult)
    .catch(() => null);
  await Deno.remove(json).catch(() => {});
  if (!r?.rows.length) {
    console.error(`${ID}: no figures (exit code ${code}); bench/RESULTS.md left alone`);
    Deno.exit(1);
  }
  const section = [
    `## ${r.id} ${r.title} (${seconds.toFixed(0)} s)`,
    "",
    markdownRows(r.rows),
    "",
    `- run alone on ${new Date().toISOString()} (\`deno task bench:b5 ${Deno.args.join(" ")}\`, ` +
    `${navigator.hardwareConcurrency} cores), not by \`deno task bench\`, which keeps this ` +
    `section as it is and measures B5 at 1,000,000 images above`,
    ...r.notes.map((n) => `- ${n}`),
    "",
  ].join("\n");
  const file = new URL("./RESULTS.md", import.meta.url).pathname;
  await Deno.writeTextFile(file, withSection(await Deno.readTextFile(file), r.id, section));
  // Keep `deno fmt --check` (part of `deno task ok`) clean, as bench/run.ts does.
  await new Deno.Command(Deno.execPath(), { args: ["fmt", "-q", file], cwd: ROOT.pathname })
    .output();
  console.log(`wrote the ${r.id} section of bench/RESULTS.md`);
  Deno.exit(code);
}

if (import.meta.main && N !== IMAGES && !SMOKE && !Deno.args.includes("--json")) {
  await recordAlone();
} else if (import.meta.main) {
  await benchMain(ID, TITLE, async (notes) => {
    if (SMOKE) notes.push("SMOKE RUN (--smoke): tiny counts, the figures mean nothing");
    const captions = await prepare(notes);
    const shapes = SHAPES.filter((s) => captions || s.name !== "caption word");
    const url = databaseUrl(SEED_DB);
    const admin = postgres(url, { max: 1, onnotice: () => {} });
    const [counts] = await admin`select (select count(*) from images)::int as images,
      (select count(*) from tags)::int as tags, (select count(*) from image_tags)::int as links,
      (select count(*) from images where text is not null)::int as captioned`;
    // The 10,000th newest image, and t1's, or the oldest when there are fewer (--images 5000).
    const [after] = await admin`select seq::text as seq from images order by seq desc
                                offset ${Math.min(9999, N - 1)} limit 1`;
    const [afterT1] = await admin`select it.image_seq::text as seq from image_tags it
      join tags t on t.id = it.tag_id where t.name = 't1'
      order by it.image_seq desc
      offset (select least(9999, image_count - 1) from tags where name = 't1') limit 1`;
    const tagCounts = await admin<{ name: string; image_count: number }[]>`
      select name, image_count from tags where name in ('t1', 't2', 't3', 't9000')`;
    notes.push(
      `data: ${counts.images} images (${counts.captioned} captioned), ${counts.tags} tags, ` +
        `${counts.links} links; tag sizes ${
          tagCounts.map((t) => `${t.name}=${t.image_count}`).join(", ")
        }`,
      `mix: every request a different URL from a seeded PRNG (mulberry32, the same URLs in both ` +
        `modes), at concurrency 8 (${COUNTS.mix.requests} requests or ${
          COUNTS.mix.ms / 1000
        } s per shape and mode, after ${COUNTS.warm.requests} warm-up requests of other draws; ` +
        `the concurrency-1 baseline draws others again): newest page, the only fixed URL; one ` +
        `tag t{r}, r in 1..${TAGS} drawn as bench/seed.ts draws tags, floor(exp(u ln ${
          TAGS + 1
        })), probability ~1/r; two distinct tags drawn that way; a tag and an excluded tag ` +
        `(t{a},-t{b}) drawn that way; the newest listing after a cursor at a seq uniform in ` +
        `1..${N}; /api/v1/tags?q= with 1 or 2 uniform digits; the library page /?tags=t{r} ` +
        `(HTML) with one tag drawn as above${
          captions
            ? `; caption search ?q= with one word of rank 1..${WORDS} drawn the same way ` +
              `(bench/seed_captions.ts, as B10 draws them)`
            : ""
        }`,
      `similarity (/api/v1/images/{id}/similar) is not in the mix: ${SEED_DB} has no ` +
        "perceptual hashes; B11 measures it",
      "CPU ms/req (in each row): service / all postgres processes on the machine / load " +
        "generator, from /proc/<pid>/stat over the concurrency-8 run",
    );
    const cursor = encodeCursor(after.seq);
    const cursorT1 = encodeCursor(afterT1.seq);
    const cases: PlanCase[] = [
      { name: "newest", path: "/api/v1/images", sql: page([]) },
      { name: "tag_popular", path: "/api/v1/images?tags=t1", sql: page(["t1"]) },
      { name: "tag_rare", path: "/api/v1/images?tags=t9000", sql: page(["t9000"]) },
      { name: "two_tags", path: "/api/v1/images?tags=t2,t3", sql: page(["t2", "t3"]) },
      {
        name: "cursor_after_10000",
        path: `/api/v1/images?cursor=${cursor}`,
        sql: page([], after.seq),
      },
      {
        name: "tag_popular_cursor_after_10000",
        path: `/api/v1/images?tags=t1&cursor=${cursorT1}`,
        sql: page(["t1"], afterT1.seq),
      },
      {
        name: "tags_count_desc",
        path: "/api/v1/tags?sort=count_desc",
        sql: tagList({ sort: "count_desc" }),
      },
      { name: "tags_q3", path: "/api/v1/tags?q=t12", sql: tagList({ q: "t12" }) },
      { name: "tags_q2", path: "/api/v1/tags?q=t1", sql: tagList({ q: "t1" }) },
    ];

    const rows: Row[] = [];
    try {
      notes.push(
        `${SEED_DB} read into the file cache before each service (${await prewarm(url)} MB; ` +
          "bench/_lib/databases.ts prewarm)",
      );
      const cached = await spawnBenchService(url, null);
      rows.push(...await mixRows(cached, shapes, "cache on", true));
      rows.push(...await diagnosticRows(cached, cases, "cache on"));
      await cached.stop();
      // Nothing kept between requests: what each query costs at N images.
      const off = "LISTING_CACHE_ENTRIES=0";
      await prewarm(url);
      const uncached = await spawnBenchService(url, null, { LISTING_CACHE_ENTRIES: "0" });
      rows.push(...await mixRows(uncached, shapes, off, true));
      rows.push(
        ...await diagnosticRows(
          uncached,
          cases.filter((c) => c.path.startsWith("/api/v1/images")),
          off,
        ),
      );
      rows.push(...await writeRows(uncached, admin, shapes, notes));
      await uncached.stop();
    } finally {
      await admin.end();
    }

    await Deno.mkdir(PLANS_DIR, { recursive: true });
    for (const c of cases) {
      await Deno.writeTextFile(new URL(`${c.name}.txt`, PLANS_DIR), await explainCase(url, c));
    }
    notes.push(
      SMOKE || N !== IMAGES
        ? `plans: written to ${PLANS_DIR.pathname} (--smoke and --images leave bench/plans/ alone)`
        : "plans: bench/plans/*.txt (EXPLAIN ANALYZE of a custom and of the generic plan of " +
          "each repeated-URL case; the service's listing statements keep the generic one after " +
          "5 runs, tests/db_listing_test.ts)",
    );
    return rows;
  });
}
