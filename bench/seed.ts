/**
 * `deno task bench:seed`: the large database of B5, `bench_1m`, seeded in SQL with
 * generate_series and kept between runs (skipped when already complete; `--force` reseeds):
 *
 * - 1,000,000 images, in insertion order one second apart, each with a unique 8-character
 *   base62 short ID (a bijection of its number, so unique by construction) and a unique hash;
 * - 10,000 tags whose popularity is Zipf-like (rank r is drawn with probability ~ 1/r:
 *   exp(random() * ln 10000) is log-uniform);
 * - 3 draws per image, ~3,000,000 links (draws of the same tag twice collapse into one).
 *
 * The per-row count trigger is disabled during the load and tags.image_count is set by one
 * UPDATE from a GROUP BY at the end; the foreign keys are checked once, by a query, instead of
 * per row (session_replication_role = replica skips the per-row FK triggers).
 */
import postgres from "postgres";
import { migrate } from "../db/migrate.ts";
import { FsStore } from "../lib/storage/fs.ts";
import { databaseUrl, withAdmin } from "./_lib.ts";

export const IMAGES = 1_000_000;

/** The kept database of `images` images: bench_1m, bench_10m (`--images 10000000`), … */
export function seedDb(images: number): string {
  return images % 1_000_000 === 0 ? `bench_${images / 1_000_000}m` : `bench_${images}`;
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
    await step(
      "short-id function",
      `create function pg_temp.b62(n bigint) returns text language sql immutable as $$
         select string_agg(substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
                  ((n / (62::bigint ^ k)::bigint) % 62)::int + 1, 1), '' order by k)
         from generate_series(0, 7) k $$`,
    );
    // 62^8 = 218340105584896 = 2^8 * 31^8; 100000000003 is odd and not a multiple of 31, so
    // i -> i * 100000000003 mod 62^8 is a bijection: the short IDs are unique and look random.
    await step(
      `${images} images`,
      `insert into images (short_id, hash, content_type, size_bytes, width, height,
                           created_at, thumbnail_key)
       select pg_temp.b62((i::bigint * 100000000003) % 218340105584896), md5(i::text) || md5('h' || i),
              'image/jpeg', 100000 + (i % 900000), 400 + (i % 1600), 300 + (i % 1200),
              now() - make_interval(secs => ${images} - i), null
       from generate_series(1, ${images}) i order by i`,
    );
    await step(
      `${TAGS} tags`,
      `insert into tags (name) select 't' || r from generate_series(1, ${TAGS}) r order by r`,
    );
    await step(
      "links (count trigger and per-row FK checks off)",
      `alter table image_tags disable trigger image_tags_count;
       set session_replication_role = replica;
       select setseed(0.42);
       insert into image_tags (image_id, tag_id, image_seq)
       select i.id, least(${TAGS}, floor(exp(random() * ln(${TAGS} + 1)))::bigint), i.seq
       from images i cross join generate_series(1, ${DRAWS_PER_IMAGE}) k
       on conflict do nothing;
       set session_replication_role = origin;
       alter table image_tags enable trigger image_tags_count`,
    );
    await step(
      "foreign keys checked once",
      `do $$ begin
         if exists (select 1 from image_tags it left join tags t on t.id = it.tag_id
                    where t.id is null) then raise exception 'dangling tag_id'; end if;
       end $$`,
    );
    await step(
      "tag counts (one UPDATE from a GROUP BY)",
      `update tags t set image_count = c.n
       from (select tag_id, count(*)::int as n from image_tags group by tag_id) c
       where c.tag_id = t.id`,
    );
    await step(
      "each image's tag IDs (one UPDATE from a GROUP BY)",
      `update images i set tag_ids = l.ids
       from (select image_id, array_agg(tag_id order by tag_id) as ids
             from image_tags group by image_id) l
       where i.id = l.image_id`,
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
