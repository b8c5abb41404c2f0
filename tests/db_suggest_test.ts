/**
 * Autocomplete (db/tags.ts suggestTags) against a plain query of what it should return, on 3,000
 * tags whose names make every branch of its plan run: prefixes with more and fewer matches than
 * it sorts, substrings of one, two and three characters, aliases that match by prefix or inside,
 * tags without images, and tags found both by name and through an alias.
 */
import assert from "node:assert/strict";
import { suggestTags } from "../db/tags.ts";
import { migratedDatabase } from "./_harness/db.ts";

const db = await migratedDatabase();
Deno.test.afterAll(() => db.drop());
// t1..t3000 with Zipf-like counts (some 0: no images), a few word-like names, and aliases.
await db.sql.unsafe(`
  insert into tags (name, image_count)
    select 't' || r, (3000 / r) * (r % 7 <> 0)::int from generate_series(1, 3000) r;
  insert into tags (name, image_count) values
    ('happy', 40), ('unhappy', 12), ('happiness', 5), ('sad', 9), ('sadness', 0), ('xt1', 3000);
  insert into tag_aliases (alias, target_id)
    select 'al_' || name, id from tags where name in ('t3', 't50', 'sad', 'sadness');
  insert into tag_aliases (alias, target_id) select 'glad', id from tags where name = 'happy';
  insert into tag_aliases (alias, target_id) select 't1_old', id from tags where name = 't2';
  analyze`);

/** What suggest should return, from a plain query over every tag and alias. */
async function expected(text: string, limit: number) {
  const rows = await db.sql<{ name: string; image_count: number; alias: string | null }[]>`
    with hits as (
      select name, image_count, null::text as alias,
             case when starts_with(name, ${text}) then 0 else 2 end as rank
      from tags where strpos(name, ${text}) > 0
      union all
      select t.name, t.image_count, a.alias,
             case when starts_with(a.alias, ${text}) then 1 else 3 end
      from tag_aliases a join tags t on t.id = a.target_id where strpos(a.alias, ${text}) > 0)
    select name, image_count, alias from (
      select distinct on (name) * from hits where image_count > 0 order by name, rank) best
    order by rank >= 2, image_count desc, name collate "C" limit ${limit}`;
  return rows.map((r) => (r.alias ? { ...r } : { name: r.name, image_count: r.image_count }));
}

const texts = [
  "t", // 3,000 prefix matches: walked in count order
  "t1", // 1,111: walked
  "t29", // 111 matches, some without images: sorted
  "t2999", // one
  "1", // no prefix match; substrings of one character
  "99", // and of two
  "x", // one tag, and nothing else
  "q", // nothing
  "y", // inside two names, found through their characters (few: sorted)
  "ne", // two characters inside
  "en", // both characters in two names, but not side by side: nothing
  "happ", // three characters and more: the trigram index
  "app", // inside only
  "al_", // aliases by prefix
  "_t", // aliases, inside
  "sad", // a tag, its alias, an alias of a tag without images
  "glad",
  "t1_", // an alias whose target also matches by its own name
];

Deno.test("suggest equals a plain query for every branch of its plan", async () => {
  for (const limit of [1, 3, 10, 50]) {
    for (const text of texts) {
      assert.deepEqual(await suggestTags(db.sql, text, limit), await expected(text, limit), text);
    }
  }
});
