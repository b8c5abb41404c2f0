/**
 * The checked-in statements (db/queries/*.sql) are what the statement builders make now: a change
 * to a builder or its cost model fails here until `deno task queries` writes the files again, so
 * that the SQL's diff is reviewed with the change.
 */
import assert from "node:assert/strict";
import { QUERIES_DIR, renderQueries } from "../scripts/queries.ts";

Deno.test("db/queries/*.sql hold the statements the builders make (deno task queries)", async () => {
  const files = renderQueries();
  assert.ok(files.length >= 9, "sanity: every shape is listed");
  const stale: string[] = [];
  for (const { file, text } of files) {
    const kept = await Deno.readTextFile(QUERIES_DIR + file).catch(() => null);
    if (kept !== text) stale.push(file);
  }
  assert.deepEqual(stale, [], "run `deno task queries` and commit the SQL it changes");
});

Deno.test("db/queries/ holds no statement that no builder makes", async () => {
  const made = new Set(renderQueries().map((f) => f.file));
  const extra: string[] = [];
  for await (const entry of Deno.readDir(QUERIES_DIR)) {
    if (!made.has(entry.name)) extra.push(entry.name);
  }
  assert.deepEqual(extra, [], "run `deno task queries`, which removes them");
});

Deno.test("db/queries/ keeps the caption search's cost model and the merge bound in the SQL", async () => {
  // Literal oracles: the word-and-tag merge's ratio and cap, the index's posting cost.
  const tagged = await Deno.readTextFile(QUERIES_DIR + "caption_search_two_words_tagged.sql");
  assert.match(tagged, /<= 20 \* least\(/);
  assert.match(tagged, /<= 400000/);
  assert.match(tagged, /s\.fewest \* 0\.03/);
  const listing = await Deno.readTextFile(QUERIES_DIR + "listing_tags.sql");
  assert.match(listing, /\) <= 10 \* \(select image_count from ranked where k = 1\)/);
});
