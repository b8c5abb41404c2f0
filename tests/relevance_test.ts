/**
 * `GET /images?q=...&sort=relevance` (issue 43): each word of the query matches the caption
 * (exactly or approximately) or a tag's name, alias or `_`-separated part; the phrase in the caption
 * comes first, then every word exact, then words through tags, then approximate matches; ties go
 * to the most sent, then the newest. `tags=` filters as before, pages follow the cursor, the work is
 * bounded, and the default order of a `q` search is unchanged.
 */
import assert from "node:assert/strict";
import { MAX_CANDIDATES_PER_WORD } from "../db/caption_search.ts";
import { searchByRelevance } from "../db/relevance_search.ts";
import { SIMILARITY_THRESHOLD } from "../domain/caption_text.ts";
import type { ImageDto } from "../domain/types.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, uploadCaptioned } from "./_harness/images.ts";

const svc = await startService();
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);

const seed = (text: string, tags: string[] = []) =>
  uploadCaptioned(svc.app, auth, text, { tags, width: 8, height: 8 });

async function list(query: string): Promise<{ items: ImageDto[]; next_cursor: string | null }> {
  const res = await svc.app.request(`/api/v1/images?${query}`);
  assert.equal(res.status, 200, await res.clone().text());
  return await res.json();
}

const ids = (page: { items: ImageDto[] }) => page.items.map((i) => i.short_id);

/** searchByRelevance() on the service's pool, with the service's thresholds. */
const relevance = (
  words: string[],
  phrase: string,
  more: { limit: number; examine?: number; probeBatch?: number; method?: "index" | "walk" },
) =>
  searchByRelevance(svc.services.sql, {
    words,
    phrase,
    tags: [],
    exclude: [],
    after: null,
    threshold: SIMILARITY_THRESHOLD,
    candidates: MAX_CANDIDATES_PER_WORD,
    ...more,
  });

// Oldest first; the names say how each matches "this is fine". Each level's image is newer than
// the better level's, so that only the levels can put the better one first.
const phrase = await seed("THIS IS FINE.");
const throughTag = await seed("this", ["fine_dog"]);
const approximate = await seed("this is finee");
const phraseNewer = await seed("well, this is fine");
const allExact = await seed("fine, this is");
const throughAlias = await seed("this", ["okay"]);
const unrelated = await seed("nothing to see");
{
  const res = await svc.app.request("/api/v1/tag-aliases/fine", {
    method: "PUT",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ target: "okay" }),
  });
  assert.equal(res.status, 201, await res.clone().text());
}
// The older phrase match was sent more: it ranks above the newer one.
await svc.db.sql`update images set send_count = 3 where short_id = ${phrase.short_id}`;

const BEST_FIRST = [phrase, phraseNewer, allExact, throughAlias, throughTag, approximate];

Deno.test("relevance: phrase, every word exact, through tags, approximate; more sent, then newest", async () => {
  const page = await list("q=this%20is%20fine&sort=relevance");
  assert.deepEqual(ids(page), BEST_FIRST.map((i) => i.short_id));
  assert.equal(page.next_cursor, null);
  assert.ok(!ids(page).includes(unrelated.short_id));
});

Deno.test("relevance pages follow the cursor, each image once, in the same order", async () => {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await list(
      `q=this%20is%20fine&sort=relevance&limit=2${cursor ? `&cursor=${cursor}` : ""}`,
    );
    seen.push(...ids(page));
    cursor = page.next_cursor;
    pages++;
  } while (cursor && pages < 10);
  assert.deepEqual(seen, BEST_FIRST.map((i) => i.short_id));
  assert.equal(pages, 3);
});

Deno.test("tags= still filters a relevance search; aliases mean their targets", async () => {
  assert.deepEqual(ids(await list("q=this%20is%20fine&sort=relevance&tags=okay")), [
    throughAlias.short_id,
  ]);
  assert.deepEqual(
    ids(await list("q=this%20is%20fine&sort=relevance&tags=-fine,-fine_dog")),
    [phrase, phraseNewer, allExact, approximate].map((i) => i.short_id),
  );
  assert.deepEqual(ids(await list("q=this%20is%20fine&sort=relevance&tags=no_such_tag")), []);
});

Deno.test("the default order of a q search is unchanged: exact words newest first, then approximate", async () => {
  const expected = [allExact, phraseNewer, phrase, approximate].map((i) => i.short_id);
  assert.deepEqual(ids(await list("q=this%20is%20fine")), expected);
  assert.deepEqual(ids(await list("q=this%20is%20fine&sort=newest")), expected);
});

Deno.test("a bad sort or cursor is 422", async () => {
  const sort = await svc.app.request("/api/v1/images?q=fine&sort=best");
  assert.equal(sort.status, 422);
  await sort.body?.cancel();
  const cursor = await svc.app.request("/api/v1/images?q=fine&sort=relevance&cursor=djE6MQ");
  assert.equal(cursor.status, 422);
  assert.deepEqual(await cursor.json(), { detail: "cursor: not a valid cursor" });
});

Deno.test("the library page offers Best match when there are words, and lists in that order", async () => {
  const page = async (query: string) => {
    const res = await svc.app.request(`/?${query}`);
    assert.equal(res.status, 200);
    return await res.text();
  };
  const order = (html: string) =>
    [...html.matchAll(/href="\/i\/([0-9A-Za-z]{8})"/g)].map((m) => m[1]);
  const best = await page("q=this%20is%20fine&sort=relevance");
  assert.deepEqual(order(best), BEST_FIRST.map((i) => i.short_id));
  assert.match(best, /<a href="\/\?q=this%20is%20fine&amp;sort=relevance" aria-current="page">/);
  const newest = await page("q=this%20is%20fine");
  assert.deepEqual(
    order(newest),
    [allExact, phraseNewer, phrase, approximate].map((i) => i.short_id),
  );
  assert.match(newest, /<a href="\/\?q=this%20is%20fine" aria-current="page">Newest<\/a>/);
  assert.match(newest, />Best match<\/a>/);
  // Without words there is no order to choose, and `sort` is ignored.
  const plain = await page("sort=relevance");
  assert.doesNotMatch(plain, /Best match/);
});

Deno.test("a relevance search examines at most its bound: the sent, then the newest of its rarest word", async () => {
  // "this" and "fine" both have six images' worth of ways; the first word drives on a tie. Sent
  // through the index, which finds more than the bound, the search walks as well.
  for (const method of [undefined, "index"] as const) {
    const hits = await relevance(["this", "fine"], "this is fine", {
      limit: 10,
      examine: 2,
      method,
    });
    // The sent image (the oldest); the phrase's images through its word pairs and the images with
    // every word exactly, two each (stages of their own); then the two newest images with "this",
    // ranked. The older tag and near matches are not read.
    assert.deepEqual(hits.map((h) => [h.short_id, h.level]), [
      [phrase.short_id, 4],
      [phraseNewer.short_id, 4],
      [allExact.short_id, 3],
      [throughAlias.short_id, 2],
    ], method);
  }
});

Deno.test("the reading goes on while an unread image could rank higher", async () => {
  // An old phrase match under newer images of every word exact; then newer tag matches.
  const old = await seed("zetafish omegaroot");
  const exact = [];
  for (let i = 0; i < 5; i++) exact.push(await seed(`omegaroot zetafish ${i}`));
  const tagged = [];
  for (let i = 0; i < 3; i++) tagged.push(await seed("zetafish", ["omegaroot"]));
  const search = (limit: number) =>
    relevance(["zetafish", "omegaroot"], "zetafish omegaroot", {
      limit,
      probeBatch: 1,
      method: "walk",
    });
  // Walking, images with both words are read from the newest in batches of 4, 16: the phrase
  // match is in the second.
  assert.deepEqual((await search(1)).map((h) => [h.short_id, h.level]), [[old.short_id, 4]]);
  assert.deepEqual((await search(7)).map((h) => h.short_id), [
    old.short_id,
    ...exact.map((i) => i.short_id).reverse(),
    tagged[2].short_id,
  ]);
});

Deno.test("a phrase of more words than the search keeps is still tested as a phrase", async () => {
  // "is" is too short to search by, but the phrase keeps it.
  const inOrder = await seed("is quuxly");
  const reversed = await seed("quuxly is");
  const hits = await relevance(["quuxly"], "is quuxly", { limit: 5 });
  assert.deepEqual(hits.map((h) => [h.short_id, h.level]), [
    [inOrder.short_id, 4],
    [reversed.short_id, 3],
  ]);
});

Deno.test("a sent image matched only through a tag comes first among the tag matches", async () => {
  const tag = `glorbnax_${crypto.randomUUID().slice(0, 8)}`;
  const sent = await seed("nothing about it", [tag]);
  await seed("nothing either", [tag]);
  const newest = await seed("still nothing", [tag]);
  await svc.db.sql`update images set send_count = 1 where short_id = ${sent.short_id}`;
  const search = (limit: number) => relevance([tag.split("_")[1]], tag.split("_")[1], { limit });
  assert.deepEqual((await search(1)).map((h) => [h.short_id, h.level]), [[sent.short_id, 2]]);
  assert.deepEqual((await search(2)).map((h) => h.short_id), [sent.short_id, newest.short_id]);
});

Deno.test("walking and through the index, a relevance search ranks the same", async () => {
  for (const method of ["walk", "index"] as const) {
    const hits = await relevance(["this", "fine"], "this is fine", { limit: 10, method });
    assert.deepEqual(hits.map((h) => h.short_id), BEST_FIRST.map((i) => i.short_id), method);
  }
});

Deno.test("a newer match of the same level in a later stage of the walk still ranks first", async () => {
  const [a, b] = ["plinkwort", "zoobalance"].map((w) => `${w}${crypto.randomUUID().slice(0, 4)}`);
  // Both match through a tag (level 2): the older by its caption's first word (the driving word,
  // read first), the newer by its tag of that word (read after).
  await seed(a, [b]);
  const newer = await seed(b, [a]);
  for (const method of ["walk", "index"] as const) {
    const hits = await relevance([a, b], `${a} ${b}`, { limit: 1, method });
    assert.deepEqual(hits.map((h) => [h.short_id, h.level]), [[newer.short_id, 2]], method);
  }
});

Deno.test("two words that seldom meet are found however old, through the index", async () => {
  const [a, b] = ["quernrot", "vellumfox"].map((w) => `${w}${crypto.randomUUID().slice(0, 4)}`);
  const old = await seed(`${a} and ${b}`);
  for (let i = 0; i < 5; i++) await seed(`${a} alone ${i}`), await seed(`${b} alone ${i}`);
  // Not the caption's phrase, which its word pairs would find first.
  const search = (method?: "index" | "walk") =>
    relevance([a, b], `${a} ${b}`, { limit: 1, examine: 4, method });
  // The walk reads the four newest images of the driving word (the first, on a tie), and stops at
  // its bound.
  assert.deepEqual(await search("walk"), []);
  assert.deepEqual((await search("index")).map((h) => [h.short_id, h.level]), [[old.short_id, 3]]);
  // Six images of each word, at most one in common: the index is the cheaper way.
  assert.deepEqual((await search()).map((h) => h.short_id), [old.short_id]);
});

Deno.test("the walk reads on past a page of approximate matches while a tag match may be older", async () => {
  const [a, b] = ["gorplequin", "mizzenbark"].map((w) => `${w}${crypto.randomUUID().slice(0, 4)}`);
  const throughTag = await seed(a, [b]);
  await seed(`${a} ${b}e`);
  const hits = await relevance([a, b], `${a} ${b}`, { limit: 1, method: "walk" });
  assert.deepEqual(hits.map((h) => [h.short_id, h.level]), [[throughTag.short_id, 2]]);
});

Deno.test("a relevance page's images are whole: the same as each image's own read", async () => {
  const word = `wholeword${crypto.randomUUID().slice(0, 6)}`;
  const sent = await seed(`${word} first`, ["ok_hand", "wholesome"]);
  await seed(`${word} second`, ["wholesome"]);
  await svc.db.sql`update images set send_count = 2 where short_id = ${sent.short_id}`;
  // One word: the sent images and the first batch are read, columns and tags, in one statement.
  const page = await list(`q=${word}&sort=relevance`);
  assert.equal(page.items.length, 2);
  for (const item of page.items) {
    const res = await svc.app.request(`/api/v1/images/${item.short_id}`);
    assert.deepEqual(item, await res.json());
  }
  assert.equal(page.items[0].short_id, sent.short_id);
});

Deno.test("the phrase is tested as words: across punctuation, in any width, never inside a word", async () => {
  const [a, b] = ["zorblat", "flonkish"].map((w) => `${w}${crypto.randomUUID().slice(0, 4)}`);
  const inside = await seed(`un${a} is ${b}, ${a}`);
  const fullwidth = await seed(
    `${a} is ${b}`.toUpperCase().replace(
      /[A-Z0-9]/g,
      (c) => String.fromCharCode(c.charCodeAt(0) + 0xfee0),
    ),
  );
  const punctuated = await seed(`${a.toUpperCase()}—is…\n${b}!`);
  const hits = await relevance([a, b], `${a} is ${b}`, { limit: 5 });
  assert.deepEqual(
    hits.map((h) => [h.short_id, h.level]),
    [[punctuated.short_id, 4], [fullwidth.short_id, 4], [inside.short_id, 3]],
  );
});

Deno.test("an old phrase under more than the bound of images with every word is found first", async () => {
  const [a, b, c] = ["brindlecog", "quillmoss", "tarnwhistle"].map((w) =>
    `${w}${crypto.randomUUID().slice(0, 4)}`
  );
  const old = await seed(`oh ${a} ${b} ${c}!`);
  // Newer: every word, and the phrase's two pairs, but never the three in a row.
  const apart = await seed(`${a} ${b} and ${b} ${c}`);
  const newest = [];
  for (let i = 0; i < 4; i++) newest.unshift(await seed(`${c} ${b} ${a} ${i}`));
  const search = (words: string[], phrase: string, method: "index" | "walk") =>
    relevance(words, phrase, { limit: 2, examine: 3, probeBatch: 1, method });
  for (const method of ["walk", "index"] as const) {
    // Walking, the newest three with every word are all it may read: the phrase comes from its
    // pairs (migration 020), and the pairs alone do not make a phrase.
    assert.deepEqual(
      (await search([a, b, c], `${a} ${b} ${c}`, method)).map((h) => [h.short_id, h.level]),
      [[old.short_id, 4], [newest[0].short_id, 3]],
      method,
    );
    assert.deepEqual(
      (await search([a, b], `${a}, ${b}`, method)).map((h) => [h.short_id, h.level]),
      [[apart.short_id, 4], [old.short_id, 4]],
      method,
    );
  }
  // A sent image with every word ranks below the phrase: the phrase's stage reads on past it and
  // a first batch of newer images with the pairs apart.
  await svc.db.sql`update images set send_count = 1 where short_id = ${newest[0].short_id}`;
  for (let i = 0; i < 4; i++) await seed(`${a} ${b} or ${b} ${c} ${i}`);
  const best = await relevance([a, b, c], `${a} ${b} ${c}`, {
    limit: 1,
    probeBatch: 1,
    method: "walk",
  });
  assert.deepEqual(best.map((h) => [h.short_id, h.level]), [[old.short_id, 4]]);
});
