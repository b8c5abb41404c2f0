/**
 * `deno task bench:seed [--images N]`: the large database of B5, `bench_1m` (or `bench_10m` for
 * `--images 10000000`, see seedDb()), seeded in SQL with generate_series and kept between runs
 * (skipped when already complete; `--force` reseeds):
 *
 * - N images (a million by default), in insertion order one second apart, each with a unique
 *   8-character base62 short ID (a bijection of its number, so unique by construction) and a
 *   unique hash;
 * - 10,000 tags whose popularity is Zipf-like (rank r is drawn with probability ~ 1/r:
 *   exp(random() * ln 10000) is log-uniform);
 * - 3 draws per image, ~3N links (draws of the same tag twice collapse into one).
 *
 * Each image's tag IDs are drawn as its row is inserted (images.tag_ids), and the links are
 * copied from them: no UPDATE of every image afterwards, which would write the table and its
 * four indexes a second time and leave half of them dead. The links' count trigger is disabled
 * during their load and tags.image_count is set by one UPDATE from a GROUP BY at the end; the
 * keys and indexes of images and image_tags are built after the load, and the foreign keys
 * checked then, once each.
 */
import postgres from "postgres";
import { migrate } from "../services/migrate.ts";
import { FsStore } from "../adapters/storage/fs.ts";
import { databaseUrl, withAdmin } from "./_lib/databases.ts";

/** The images of the benchmarks' kept database, `bench_1m`. */
export const IMAGES = 1_000_000;

/** A short name of an image count: 1m, 10m, 20k, 12345. */
export function scaleName(images: number): string {
  if (images % 1_000_000 === 0) return `${images / 1_000_000}m`;
  if (images % 1_000 === 0) return `${images / 1_000}k`;
  return String(images);
}

/** The kept database of `images` images: bench_1m, bench_10m (`--images 10000000`), bench_20k. */
export function seedDb(images: number): string {
  return `bench_${scaleName(images)}`;
}

/** The name of the kept database of the benchmarks (a million images). */
export const SEED_DB = seedDb(IMAGES);
export const TAGS = 10_000;
export const DRAWS_PER_IMAGE = 3;

/** The tag name of popularity rank `r` (1 = most popular). */
export const tagName = (r: number) => `t${r}`;

/** Seeds `seedDb(images)` unless it is already complete; returns what it did. */
export async function seed(
  force = false,
  images = IMAGES,
): Promise<{ seeded: boolean; seconds: number }> {
  // The short IDs' bijection multiplies the image's number in a bigint (below).
  if (images > 92_233_720) throw new Error(`seed: at most 92,233,720 images, not ${images}`);
  const db = seedDb(images);
  const started = performance.now();
  const exists = await withAdmin(async (sql) =>
    (await sql`select 1 from pg_database where datname = ${db}`).length > 0
  );
  if (exists && !force) {
    const sql = postgres(databaseUrl(db), { max: 1, onnotice: () => {} });
    try {
      const [row] = await sql`select to_regclass('bench_seed_done') is not null as done`;
      if (row.done) return { seeded: false, seconds: (performance.now() - started) / 1000 };
    } finally {
      await sql.end();
    }
  }
  await withAdmin(async (sql) => {
    await sql.unsafe(`drop database if exists ${db} with (force)`);
    await sql.unsafe(`create database ${db}`);
  });
  // Two connections: migrate() holds one for its advisory lock.
  const sql = postgres(databaseUrl(db), { max: 2, onnotice: () => {} });
  let conn: postgres.ReservedSql | undefined;
  const step = async (label: string, text: string) => {
    const t0 = performance.now();
    conn ??= await sql.reserve(); // one session: temp function and settings live in it
    await conn.unsafe(text);
    console.error(`seed: ${label} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
  };
  try {
    const objects = await Deno.makeTempDir({ prefix: "bench-seed-" });
    await migrate(sql, new FsStore(objects)); // the backfill step finds no rows: no objects
    await Deno.remove(objects, { recursive: true });
    await step("settings", `set maintenance_work_mem = '256MB'; set work_mem = '64MB'`);
    // One expression, so PostgreSQL inlines it: 3-4x faster than an aggregate over the 8 digits
    // (9 against 32 µs an image here), and the same IDs. The least significant digit comes first.
    const digit = (div: bigint) =>
      `substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', ` +
      `(n / ${div} % 62)::int + 1, 1)`;
    await step(
      "short-id function",
      `create function pg_temp.b62(n bigint) returns text language sql immutable as $$
         select ${Array.from({ length: 8 }, (_, k) => digit(62n ** BigInt(k))).join(" || ")} $$`,
    );
    // The keys and indexes of the two big tables are dropped during the load and built from
    // their definitions after it, each by one sort: rows inserted one by one into indexes on
    // random keys (hash, short ID, UUID) took over 16 minutes for 10M images without finishing,
    // most of it writing WAL for pages evicted and dirtied again. Their definitions are read
    // from the catalog, so they are the migrations' own.
    const keys = await (conn ??= await sql.reserve()).unsafe<
      { tbl: string; name: string; def: string; kind: "f" | "k" | "i" }[]
    >(`
      select conrelid::regclass::text as tbl, conname as name, pg_get_constraintdef(oid) as def,
             case contype when 'f' then 'f' else 'k' end as kind
      from pg_constraint
      where contype in ('p', 'u', 'f')
        and (conrelid in ('images'::regclass, 'image_tags'::regclass)
             or confrelid = 'images'::regclass)
      union all
      select indrelid::regclass::text, indexrelid::regclass::text, pg_get_indexdef(indexrelid), 'i'
      from pg_index
      where indrelid in ('images'::regclass, 'image_tags'::regclass)
        and not exists (select 1 from pg_constraint where conindid = indexrelid)`);
    const byKind = (kind: string) => keys.filter((k) => k.kind === kind);
    await step(
      `drop ${keys.length} keys and indexes of images and image_tags`,
      [
        ...byKind("f").map((k) => `alter table ${k.tbl} drop constraint ${k.name};`),
        ...byKind("k").map((k) => `alter table ${k.tbl} drop constraint ${k.name};`),
        ...byKind("i").map((k) => `drop index ${k.name};`),
      ].join("\n"),
    );
    await step(
      `${TAGS} tags`,
      `insert into tags (name) select 't' || r from generate_series(1, ${TAGS}) r order by r`,
    );
    // 62^8 = 218340105584896 = 2^8 * 31^8; 100000000003 is odd and not a multiple of 31, so
    // i -> i * 100000000003 mod 62^8 is a bijection: the short IDs are unique and look random.
    // The product fits a bigint up to i = 92,233,720 (checked at the top).
    // seq is i itself, not numbered in insertion order: no ORDER BY i, which sorted every row
    // (1.8 GB at 10M images) before the first was inserted; the identity continues after it.
    // The tag IDs are the ranks (tags inserted in rank order into a fresh table); the subquery
    // names i so that it runs per image, not once.
    await step(
      `${images} images with their tag IDs`,
      `select setseed(0.42);
       insert into images (seq, short_id, hash, content_type, size_bytes, width, height,
                           created_at, thumbnail_key, tag_ids)
       overriding system value
       select i, pg_temp.b62((i::bigint * 100000000003) % 218340105584896),
              md5(i::text) || md5('h' || i),
              'image/jpeg', 100000 + (i % 900000), 400 + (i % 1600), 300 + (i % 1200),
              now() - make_interval(secs => ${images} - i), null,
              array(select distinct least(${TAGS}, floor(exp(random() * ln(${TAGS} + 1)))::bigint)
                    from generate_series(1, ${DRAWS_PER_IMAGE}) k where i > 0 order by 1)
       from generate_series(1, ${images}) i;
       select setval(pg_get_serial_sequence('images', 'seq'), ${images})`,
    );
    await step(
      "links from the tag IDs (count trigger off)",
      `alter table image_tags disable trigger image_tags_count;
       insert into image_tags (image_id, tag_id, image_seq)
       select i.id, t, i.seq from images i cross join unnest(i.tag_ids) t;
       alter table image_tags enable trigger image_tags_count`,
    );
    for (const k of [...byKind("k"), ...byKind("i")]) {
      await step(
        `build ${k.name}`,
        k.kind === "i" ? k.def : `alter table ${k.tbl} add constraint ${k.name} ${k.def}`,
      );
    }
    // Adding a foreign key checks every row once, by a join.
    for (const k of byKind("f")) {
      await step(`check ${k.name}`, `alter table ${k.tbl} add constraint ${k.name} ${k.def}`);
    }
    await step(
      "tag counts (one UPDATE from a GROUP BY)",
      `update tags t set image_count = c.n
       from (select tag_id, count(*)::int as n from image_tags group by tag_id) c
       where c.tag_id = t.id`,
    );
    for (const table of ["images", "tags", "image_tags"]) {
      await step(`vacuum analyze ${table}`, `vacuum analyze ${table}`);
    }
    await step(
      "done marker",
      `create table bench_seed_done (at timestamptz default now());
                               insert into bench_seed_done default values`,
    );
  } finally {
    conn?.release();
    await sql.end();
  }
  return { seeded: true, seconds: (performance.now() - started) / 1000 };
}

/** `--images N` of the command line, or a million. */
export function imagesArg(): number {
  const i = Deno.args.indexOf("--images");
  const n = i >= 0 ? Number(Deno.args[i + 1]) : IMAGES;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new Error(`--images: not a count: ${Deno.args[i + 1]}`);
  }
  return n;
}

if (import.meta.main) {
  const images = imagesArg();
  const db = seedDb(images);
  const { seeded, seconds } = await seed(Deno.args.includes("--force"), images);
  const size = await withAdmin(async (sql) =>
    (await sql`select pg_size_pretty(pg_database_size(${db})) as size`)[0].size
  );
  console.log(
    seeded
      ? `seeded ${db} in ${seconds.toFixed(1)} s; database size ${size}`
      : `${db} already seeded (${size}); skipped`,
  );
}
