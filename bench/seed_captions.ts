/**
 * Captions for the images of `bench_1m` (B10), seeded in SQL and kept between runs (marker table
 * `bench_captions_done`): every image gets 1-6 words drawn Zipf-like from a vocabulary of 5,000
 * made-up words (rank r drawn with probability ~ 1/r, like the tags), upper-cased as recognition
 * returns them, and 5% of the words carry a recognition slip (one letter replaced), which puts
 * near-spellings into the dictionary as real captions do. The words' links are loaded with their
 * count trigger off, then counted (and copied onto the images' rows, migration 012) once, and
 * the captions' word pairs (migration 020) are written in one statement, their trigger off.
 * `--images N`: of the database of N images instead (bench/seed.ts), which B5 then includes in
 * its caption-word rows.
 */
import postgres from "postgres";
import { migrate } from "../services/migrate.ts";
import { FsStore } from "../adapters/storage/fs.ts";
import { databaseUrl } from "./_lib/databases.ts";
import { IMAGES, imagesArg, seed, seedDb } from "./seed.ts";

/** The vocabulary's size. */
export const WORDS = 5_000;
const SYLLABLES = [
  "ka",
  "lo",
  "mi",
  "ne",
  "su",
  "ta",
  "ri",
  "po",
  "de",
  "gu",
  "fa",
  "be",
  "zo",
  "chi",
  "sha",
  "tre",
  "bla",
  "qui",
  "ver",
  "mon",
];

/** The word of popularity rank `r` (1-5,000): three syllables, its base-20 digits, so unique. */
export function captionWord(r: number): string {
  return [r % 20, Math.floor(r / 20) % 20, Math.floor(r / 400) % 20].map((d) => SYLLABLES[d])
    .join("");
}

/** Seeds `seedDb(images)` (if needed) and its captions (if needed); returns what it did. */
export async function seedCaptions(
  images = IMAGES,
): Promise<{ seeded: boolean; seconds: number }> {
  await seed(false, images);
  const started = performance.now();
  const db = seedDb(images);
  const sql = postgres(databaseUrl(db), { max: 2, onnotice: () => {} });
  try {
    // The kept database may predate migration 009 (no caption columns yet).
    const objects = await Deno.makeTempDir({ prefix: "bench-seed-" });
    await migrate(sql, new FsStore(objects));
    await Deno.remove(objects, { recursive: true });
    const [{ done }] = await sql`select to_regclass('bench_captions_done') is not null as done`;
    if (done) return { seeded: false, seconds: 0 };
    const conn = await sql.reserve();
    const step = async (label: string, text: string) => {
      const t0 = performance.now();
      await conn.unsafe(text);
      console.error(`seed captions: ${label} (${((performance.now() - t0) / 1000).toFixed(1)} s)`);
    };
    try {
      const syllables = `array[${SYLLABLES.map((s) => `'${s}'`).join(",")}]`;
      await step(
        "settings and the vocabulary function",
        `set maintenance_work_mem = '512MB'; set work_mem = '64MB';
         create function pg_temp.word(r int) returns text language sql immutable as $$
           select (${syllables})[1 + r % 20] || (${syllables})[1 + (r / 20) % 20]
                  || (${syllables})[1 + (r / 400) % 20] $$;
         create function pg_temp.slip(w text) returns text language sql volatile as $$
           select overlay(w placing substr('aeiourstn', 1 + floor(random() * 9)::int, 1)
                          from 1 + floor(random() * length(w))::int for 1) $$`,
      );
      await step(
        `captions of ${db}'s images`,
        `select setseed(0.21);
         truncate image_words, caption_word_neighbours, caption_words;
         create temp table cap as
           select i.id, i.seq, array_agg(case when random() < 0.05 then pg_temp.slip(w) else w end
                                         order by n) as words
           from images i
           cross join lateral generate_series(1, 1 + (i.seq * 7919 % 6)::int) n
           -- n in the draw: a lateral that names no outer column is evaluated once, not per row
           cross join lateral (select pg_temp.word(least(${WORDS},
                                 floor(exp(random() * ln(${WORDS} + 1)) + 0 * n)::int)) as w) p
           group by i.id, i.seq;
         alter table images disable trigger caption_pairs_update;
         update images i set text = upper(array_to_string(c.words, ' ')), text_source = 'ocr'
           from cap c where c.id = i.id;
         alter table images enable trigger caption_pairs_update`,
      );
      await step(
        "dictionary and links (count trigger off)",
        `insert into caption_words (word) select distinct unnest(words) from cap order by 1
           on conflict do nothing;
         alter table image_words disable trigger image_words_count;
         insert into image_words (word_id, image_seq, image_id)
           select distinct w.id, c.seq, c.id from cap c cross join unnest(c.words) u(word)
           join caption_words w on w.word = u.word
           on conflict do nothing;
         alter table image_words enable trigger image_words_count;
         update caption_words w set image_count = c.n
           from (select word_id, count(*)::int as n from image_words group by word_id) c
           where c.word_id = w.id;
         update images i set word_ids = l.ids
           from (select image_id, array_agg(word_id order by word_id) as ids
                 from image_words group by image_id) l
           where i.id = l.image_id`,
      );
      await step(
        "the captions' word pairs (pair trigger off)",
        `truncate caption_pairs;
         insert into caption_pairs (pair, image_seq)
           select k, i.seq from images i cross join unnest(caption_pair_keys(i.text)) k
           where i.text is not null`,
      );
      for (const table of ["images", "caption_words", "image_words", "caption_pairs"]) {
        await step(`vacuum analyze ${table}`, `vacuum analyze ${table}`);
      }
      await step("done marker", `create table bench_captions_done (at timestamptz default now())`);
    } finally {
      conn.release();
    }
    return { seeded: true, seconds: (performance.now() - started) / 1000 };
  } finally {
    await sql.end();
  }
}

if (import.meta.main) {
  const { seeded, seconds } = await seedCaptions(imagesArg());
  console.log(seeded ? `captions seeded in ${seconds.toFixed(1)} s` : "captions already seeded");
}
