/**
 * Caption text (issue 21) through the API on a real service: recognition runs from the job queue
 * after an upload, never over a person's text; PATCH corrects or clears it; `q` finds images by
 * their words, exactly first, then approximately, with tags and exclusions, paging by cursor, and
 * returns exactly what a brute-force query over every caption returns, whichever way (walk or
 * word index) each level takes; the words' counts and each image's copy of its word IDs stay
 * exact; a merge moves the caption. The recogniser here is a stand-in: adapters/ocr has its own tests.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { type CaptionCursor, searchImagesByCaption } from "../db/caption_search.ts";
import { setImageCaption } from "../db/captions.ts";
import { replaceWords } from "../db/caption_words.ts";
import { recognizeImage } from "../services/captions/recognition.ts";
import { CAPTION_RECOGNITION_QUEUE } from "../services/queues.ts";
import { SIMILARITY_THRESHOLD } from "../domain/caption_text.ts";
import type { ImageDto, ImagePage } from "../domain/types.ts";
import { startService } from "./_harness/app.ts";
import { explainWith, sentStatement } from "./_harness/plans.ts";
import { migratedDatabase } from "./_harness/db.ts";
import { createSearchSql } from "../db/client.ts";
import { authHeader, makeImage, upload, uploadForm } from "./_harness/images.ts";

/** What the stand-in recogniser reads on every image, and how often it was asked. */
let printed = "THIS IS FINE";
let reads = 0;
const svc = await startService({
  jobs: true,
  captionReader: {
    read: () => {
      reads++;
      return Promise.resolve({ text: printed });
    },
  },
});
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);
const json = { ...auth, "content-type": "application/json" };

/**
 * A new image. Its recognition job runs in the background: captions a test sets itself are
 * "manual", which recognition leaves alone. `recognise: false` uploads it with an empty manual
 * caption instead, so no job is sent: tests that made dozens of images and set their captions
 * themselves left a backlog of jobs that the recogniser was still working through when a later
 * test waited for its own image's caption (once past its 30 s on a loaded machine).
 */
async function newImage(tags: string[] = [], { recognise = true } = {}): Promise<ImageDto> {
  const form = uploadForm(await makeImage("png", 12, 12), tags);
  if (!recognise) {
    form.append("text", "");
    form.append("text_source", "manual");
  }
  const res = await svc.app.request("/api/v1/images", {
    method: "POST",
    headers: auth,
    body: form,
  });
  assert.equal(res.status, 201, await res.clone().text());
  return await res.json();
}

/** A new image whose caption the test sets itself (no recognition job). */
const uncaptionedImage = (tags: string[] = []) => newImage(tags, { recognise: false });

async function getImage(id: string): Promise<ImageDto> {
  const res = await svc.app.request(`/api/v1/images/${id}`);
  assert.equal(res.status, 200);
  return await res.json();
}

async function waitForText(id: string): Promise<ImageDto> {
  for (let i = 0; i < 300; i++) {
    const image = await getImage(id);
    if (image.text !== null) return image;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no text for ${id} after 30 s; ${await recognitionTrail(id)}`);
}

/** What the queue and the service's log say of `id`'s recognition: for a failure's message. */
async function recognitionTrail(id: string): Promise<string> {
  const jobs = await svc.db.sql`
    select state, retry_count, output from jobs.job
    where name = ${CAPTION_RECOGNITION_QUEUE} and data->>'short_id' = ${id}`
    .then((rows) => JSON.stringify(rows), (err) => `jobs not read: ${err}`);
  const lines = svc.logs.filter((l) => l.includes(id) || /"level":"(warn|error)"/.test(l));
  return `its jobs: ${jobs}; log: ${lines.slice(-20).join("\n")}`;
}

function patchText(id: string, text: unknown) {
  return svc.app.request(`/api/v1/images/${id}`, {
    method: "PATCH",
    headers: json,
    body: JSON.stringify({ text }),
  });
}

/** Every page of a search, as short IDs. */
async function search(query: Record<string, string>, limit = 50): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams({ ...query, limit: String(limit) });
    if (cursor) params.set("cursor", cursor);
    const res = await svc.app.request(`/api/v1/images?${params}`);
    assert.equal(res.status, 200, await res.clone().text());
    const page: ImagePage = await res.json();
    out.push(...page.items.map((i) => i.short_id));
    cursor = page.next_cursor;
  } while (cursor);
  return out;
}

Deno.test("an upload gets its caption from a recognition job, in the background", async () => {
  printed = "THIS IS FINE";
  // Its own tag: other tests' images read "THIS IS FINE" too, before or after this one.
  const tag = `fine_${crypto.randomUUID().slice(0, 6)}`;
  const res = await upload(svc.app, auth, await makeImage("png", 14, 14), [tag]);
  assert.equal(res.status, 201);
  const created: ImageDto = await res.json();
  assert.equal(created.text, null, "the upload answers before recognition");
  const image = await waitForText(created.short_id);
  assert.equal(image.text, "THIS IS FINE");
  assert.equal(image.text_source, "ocr");
  assert.deepEqual(await search({ q: "fine", tags: tag }), [created.short_id]);
});

Deno.test("a person's text is kept; recognition never overwrites it", async () => {
  const image = await newImage();
  await waitForText(image.short_id);
  const res = await patchText(image.short_id, "  sips   tea \n\n\n\n calmly ");
  assert.equal(res.status, 200);
  const patched: ImageDto = await res.json();
  assert.equal(patched.text, "sips tea\n\ncalmly");
  assert.equal(patched.text_source, "manual");
  printed = "SOMETHING ELSE";
  const before = reads;
  await recognizeImage(
    { sql: svc.services.sql, store: svc.services.store, log: svc.services.log, reader: read },
    image.short_id,
  );
  assert.equal(reads, before + 1, "recognition ran");
  assert.equal((await getImage(image.short_id)).text, "sips tea\n\ncalmly");
  printed = "THIS IS FINE";
});

const read = () =>
  Promise.resolve({
    read: () => {
      reads++;
      return Promise.resolve({ text: printed });
    },
  });

Deno.test("PATCH text: null gives the caption back to recognition, which reads it again", async () => {
  const image = await newImage();
  await waitForText(image.short_id);
  assert.equal((await (await patchText(image.short_id, "mine")).json()).text_source, "manual");
  printed = "READ AGAIN";
  const cleared = await patchText(image.short_id, null);
  assert.equal(cleared.status, 200);
  assert.equal((await cleared.json()).text, null);
  const again = await waitForText(image.short_id);
  assert.deepEqual([again.text, again.text_source], ["READ AGAIN", "ocr"]);
  printed = "THIS IS FINE";
});

Deno.test("PATCH text refuses what it cannot store and unknown images", async () => {
  const image = await newImage();
  assert.equal((await patchText(image.short_id, "x".repeat(2001))).status, 422);
  assert.equal((await patchText(image.short_id, 5)).status, 422);
  assert.equal((await patchText("ZZZZZZZZ", "words")).status, 404);
  assert.equal((await patchText("bad", "words")).status, 404);
  const anonymous = await svc.app.request(`/api/v1/images/${image.short_id}`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ text: "words" }),
  });
  assert.equal(anonymous.status, 401);
});

Deno.test("q: exact matches first, then recognition slips, each newest first; with tags", async () => {
  const tag = `cap_${crypto.randomUUID().slice(0, 6)}`;
  const exactOld = await newImage([tag]);
  const slip = await newImage([tag]); // newer, but only an approximate match
  const exactNew = await newImage([tag, "sarcastic"]);
  const other = await newImage([tag]);
  for (
    const [img, text] of [[exactOld, "FACEPALM"], [slip, "FACEPRALM"], [exactNew, "Facepalm!"]]
  ) {
    await setImageCaption(svc.services.sql, (img as ImageDto).short_id, text as string, "manual");
  }
  await setImageCaption(svc.services.sql, other.short_id, "EYE ROLL", "manual");
  const want = [exactNew.short_id, exactOld.short_id, slip.short_id];
  assert.deepEqual(await search({ q: "facepalm", tags: tag }), want);
  assert.deepEqual(await search({ q: "FacePalm", tags: tag }, 1), want, "one per page");
  assert.deepEqual(await search({ q: "facepalm", tags: `${tag},-sarcastic` }), want.slice(1));
  assert.deepEqual(await search({ q: "eye roll", tags: tag }), [other.short_id]);
  assert.deepEqual(await search({ q: "eye facepalm", tags: tag }), [], "every word must match");
  assert.deepEqual(await search({ q: "qwxzv" }), []);
  assert.deepEqual(await search({ q: "facepalm", tags: "no_such_tag_here" }), []);
  // Both levels in one page, and the page after a level-2 cursor starts where it stopped.
  const first = await svc.app.request(`/api/v1/images?q=facepalm&tags=${tag}&limit=2`);
  const page: ImagePage = await first.json();
  assert.deepEqual(page.items.map((i) => i.short_id), want.slice(0, 2));
  assert.deepEqual(page.items[0].text, "Facepalm!");
});

Deno.test("q and its cursor are checked", async () => {
  assert.equal((await svc.app.request(`/api/v1/images?q=${"a".repeat(129)}`)).status, 422);
  assert.equal((await svc.app.request(`/api/v1/images?q=${"a".repeat(128)}`)).status, 200);
  const plain = await (await svc.app.request("/api/v1/images?limit=1")).json();
  // A listing's cursor is not a search's, and the reverse.
  const mixed = await svc.app.request(`/api/v1/images?q=fine&cursor=${plain.next_cursor}`);
  assert.equal(mixed.status, 422);
  assert.equal((await svc.app.request("/api/v1/images?q=fine&cursor=djI6MzpeeA")).status, 422);
});

/**
 * The brute-force oracle's word rules, written out here instead of taken from the code under test
 * (domain/caption_text.ts): distinct lower-cased runs of letters and digits; those of three
 * letters or more, unless the query has no such word; at most eight.
 */
function oracleWords(q: string): string[] {
  const all = [...new Set(q.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
  const long = all.filter((w) => [...w].length >= 3);
  return (long.length ? long : all).slice(0, 8);
}

/** The oracle's trigram similarity at which a word matches approximately. */
const ORACLE_THRESHOLD = 0.5;

Deno.test("q returns exactly what a brute-force query over every caption returns", async () => {
  const sql = svc.services.sql;
  const tag = `bf_${crypto.randomUUID().slice(0, 6)}`;
  // On fewer images than any word: with it, the tag drives each level's walk.
  const rare = `${tag}_rare`;
  const vocabulary = ["happy", "hapy", "sad", "angry", "angyr", "thumbs", "thumb", "fine", "this"];
  const ids: string[] = [];
  for (let i = 0; i < 60; i++) {
    const image = await uncaptionedImage([
      tag,
      ...(i % 3 ? [] : ["skip_me"]),
      ...(i % 4 ? [] : [rare]),
    ]);
    const words = Array.from({ length: 1 + (i % 4) }, (_, k) => vocabulary[(i * 7 + k * 3) % 9]);
    // Some captions carry a word and its slip ("HAPPY HAPY"): exact hits the near walks meet.
    if (i % 5 === 0) words.push(vocabulary[(i * 7 + 1) % 9]);
    await setImageCaption(sql, image.short_id, words.join(" ").toUpperCase(), "manual");
    ids.push(image.short_id);
  }
  // Words spelt as on some images, slips of them, and words no caption has: "angri" and "thumbz"
  // are no image's word, only near ones.
  // A query's short words are dropped beside longer ones ("is fine" is "fine"), kept alone ("is").
  const queries = [
    "happy",
    "angry",
    "thumbs",
    "this fine",
    "happy sad",
    "hapy",
    "fine",
    "xyzzy",
    "is fine",
    "is",
  ];
  // A near hit can carry the exact spelling of a word: "sad thumb" finds SAD THUMBS THIS.
  // With tags and an exclusion, tags alone, an exclusion alone, and words alone: each is a
  // statement of its own (a search leaves out the steps it has no use for).
  // Two tags where neither holds the other: a walk of the rarer one's images probes the other.
  const filters = [
    [[tag], ["skip_me"]],
    [[tag, rare], ["skip_me"]],
    [[rare, "skip_me"], []],
    [[tag], []],
    [[], ["skip_me"]],
    [[], []],
  ];
  for (
    const [q, tags, exclude] of [...queries, "angri", "thumbz", "angri happy", "sad thumb"]
      .flatMap((q) => filters.map(([tags, exclude]) => [q, tags, exclude] as const))
  ) {
    const words = oracleWords(q);
    const carries = (name: string) =>
      sql`exists (select 1 from image_tags x join tags y on y.id = x.tag_id
                  where x.image_id = i.id and y.name = ${name})`;
    // Each image's level: 2 when every word is one of its words, 1 when each is or is close.
    const oracle = await sql<{ short_id: string }[]>`
      with w as (select unnest(${words}::text[]) as q),
      img as (
        select i.short_id, i.seq, array(select regexp_split_to_table(lower(i.text), '[^[:alnum:]]+'))
          as words
        from images i
        where i.text is not null
          ${tags.reduce((all, name) => sql`${all} and ${carries(name)}`, sql``)}
          ${exclude.reduce((all, name) => sql`${all} and not ${carries(name)}`, sql``)}),
      lvl as (
        select short_id, seq,
          case when (select bool_and(q = any(words)) from w) then 2
               when (select bool_and(exists (
                 select 1 from unnest(words) x
                 where x = q or similarity(x, q) >= ${ORACLE_THRESHOLD})) from w) then 1
          end as level
        from img)
      select short_id from lvl where level is not null order by level desc, seq desc`;
    // Pages of 2: the exact level's walk of a rare tag stops at a page and resumes at a cursor.
    for (const limit of [50, 7, 2]) {
      assert.deepEqual(
        await search(
          tags.length + exclude.length
            ? { q, tags: [...tags, ...exclude.map((e) => `-${e}`)].join(",") }
            : { q },
          limit,
        ),
        oracle.map((r) => r.short_id),
        `${q} ${tags} -${exclude} (pages of ${limit})`,
      );
      // Each way of finding a level's images (the counts choose one), forced, finds the same.
      for (const method of ["walk", "index", "merge"] as const) {
        const found: string[] = [];
        let after: CaptionCursor | null = null;
        for (;;) {
          const rows = await searchImagesByCaption(sql, {
            words,
            tags: [...tags],
            exclude: [...exclude],
            limit,
            after,
            method,
          });
          found.push(...rows.map((r) => r.short_id));
          if (rows.length < limit) break;
          const last = rows[rows.length - 1];
          after = { level: last.level, seq: last.seq };
        }
        assert.deepEqual(
          found,
          oracle.map((r) => r.short_id),
          `${q} ${tags} -${exclude} ${method} ${limit}`,
        );
      }
    }
  }
});

Deno.test("a search's words and tags are one scan of the word and tag index; no tag condition without tags", async () => {
  // One scan intersects the lists as it reads them, stepping the longer ahead; two indexes ANDed
  // read each list whole (a word of 36,478 images with a tag of 987: 6.7 ms against 0.44 at a
  // million images). `tag_ids @> '{}'` holds for every image, so a search without tags that read
  // the index for it would read the whole index. With sequential scans priced out, the planner
  // takes an index a condition allows.
  const words = ["happy", "fine"];
  for (const tags of [[], ["some_tag"]]) {
    const search = (sql: postgres.Sql) =>
      searchImagesByCaption(sql, {
        words,
        tags,
        exclude: [],
        limit: 10,
        after: null,
        method: "index",
      });
    const statement = await sentStatement(svc.db.url, search, /from images i/);
    const plan = await explainWith(svc.db.sql, statement, { enable_seqscan: "off" });
    const conditions = plan.split("\n").filter((l) => l.includes("Index Cond:"))
      .filter((l) => /\((word_ids|tag_ids) /.test(l));
    assert.ok(conditions.length > 0, plan);
    assert.doesNotMatch(plan, /BitmapAnd/, plan);
    for (const line of conditions) {
      assert.match(line, /word_ids (@>|&&) /, plan);
      assert.equal(line.includes("tag_ids @> "), tags.length > 0, `tags ${tags}:\n${plan}`);
    }
  }
});

Deno.test("the words' image counts stay exact through edits, clears and deletes", async () => {
  const sql = svc.services.sql;
  const a = await newImage();
  const b = await newImage();
  const [one, two, three] = ["one", "two", "three"].map((n) =>
    `zq${n}${crypto.randomUUID().slice(0, 4)}`
  );
  await setImageCaption(sql, a.short_id, `${one} ${two}`, "manual");
  await setImageCaption(sql, b.short_id, two, "manual");
  await setImageCaption(sql, a.short_id, `${two} ${three}`, "manual");
  const del = await svc.app.request(`/api/v1/images/${b.short_id}`, {
    method: "DELETE",
    headers: auth,
  });
  assert.equal(del.status, 204);
  const counts = await sql<{ word: string; stored: number; real: number }[]>`
    select w.word, w.image_count as stored,
      (select count(*)::int from image_words iw where iw.word_id = w.id) as real
    from caption_words w where w.word = any(${[one, two, three]}::text[])`;
  const byWord = Object.fromEntries(counts.map((c) => [c.word, [c.stored, c.real]]));
  assert.deepEqual(byWord, { [one]: [0, 0], [two]: [1, 1], [three]: [1, 1] });
  // The copy on the image's row that the word index reads (migration 012) is the same set.
  const [row] = await sql<{ copy: string[]; links: string[] }[]>`
    select array(select unnest(i.word_ids) order by 1) as copy,
           array(select w.id from caption_words w where w.word = any(${[two, three]}::text[])
                 order by 1) as links
    from images i where i.short_id = ${a.short_id}`;
  assert.deepEqual(row.copy, row.links);
  assert.equal(row.copy.length, 2);
});

/**
 * A word of `n` random letters: words of other tests in this file must not come near it (a shared
 * stretch of letters is a shared run of trigrams).
 */
function randomWord(n: number): string {
  return Array.from(
    crypto.getRandomValues(new Uint8Array(n)),
    (b) => "abcdefghijklmnopqrstuvwxyz"[b % 26],
  )
    .join("");
}

/** The stored near spellings of `word` (migration 013), with their similarity. */
async function neighboursOf(word: string): Promise<Record<string, number>> {
  const rows = await svc.services.sql<{ word: string; similarity: number }[]>`
    select w.word, n.similarity from caption_words o
    join caption_word_neighbours n on n.word_id = o.id join caption_words w on w.id = n.near_id
    where o.word = ${word}`;
  return Object.fromEntries(rows.map((r) => [r.word, r.similarity]));
}

Deno.test("a new word's near spellings are stored both ways, at the search's threshold", async () => {
  const sql = svc.services.sql;
  // Trigram similarity: one letter changed at the end of ten is well above 0.5; another random
  // word is far.
  const a = randomWord(10);
  const [b, far] = [`${a.slice(0, -1)}${a.endsWith("x") ? "y" : "x"}`, randomWord(10)];
  await setImageCaption(sql, (await newImage()).short_id, a, "manual");
  await setImageCaption(sql, (await newImage()).short_id, `${b} ${far}`, "manual");
  const [{ s }] = await sql<{ s: number }[]>`select similarity(${a}, ${b}) as s`;
  assert.ok(s >= SIMILARITY_THRESHOLD);
  assert.deepEqual(await neighboursOf(a), { [b]: s });
  assert.deepEqual(await neighboursOf(b), { [a]: s });
  assert.deepEqual(await neighboursOf(far), {});
  // The SQL's threshold is the search's: the function the trigger checks with, and pg_trgm's `%`
  // that finds the candidates, set for the trigger's function.
  const [row] = await sql<{ threshold: number; config: string[] }[]>`
    select caption_neighbour_threshold() as threshold, proconfig as config
    from pg_proc where proname = 'caption_words_neighbours_added'`;
  assert.equal(row.threshold, SIMILARITY_THRESHOLD);
  assert.deepEqual(row.config, [`pg_trgm.similarity_threshold=${SIMILARITY_THRESHOLD}`]);
});

Deno.test("two writers adding words near each other at once both store the pair", async () => {
  const sql = svc.services.sql;
  const a = randomWord(10);
  const b = `${a.slice(0, -1)}${a.endsWith("x") ? "y" : "x"}`;
  const rowId = async (image: ImageDto) =>
    (await sql<{ id: string }[]>`select id from images where short_id = ${image.short_id}`)[0].id;
  // No recognition job: its caption's words would replace these, or these its (then a search of
  // the words and a brute-force query of the text, in a test that runs later, disagree).
  const images = [await uncaptionedImage(), await uncaptionedImage()];
  const [first, second] = [await rowId(images[0]), await rowId(images[1])];
  let secondDone = false;
  let secondWriter: Promise<unknown> | undefined;
  await sql.begin(async (tx) => {
    await replaceWords(tx, first, a);
    // The second writer starts before the first commits. Without the lock it would not see `a`
    // (uncommitted), nor the first `b`: the pair would be lost. With it, the second waits.
    secondWriter = sql.begin((tx2) => replaceWords(tx2, second, b)).finally(() => {
      secondDone = true;
    });
    for (let i = 0; i < 100 && !secondDone; i++) {
      const [{ waiting }] = await sql<{ waiting: boolean }[]>`
        select exists (select 1 from pg_locks where locktype = 'advisory' and not granted)
          as waiting`;
      if (waiting) break;
      await new Promise((r) => setTimeout(r, 50));
    }
  });
  await secondWriter;
  assert.deepEqual(Object.keys(await neighboursOf(a)), [b]);
  assert.deepEqual(Object.keys(await neighboursOf(b)), [a]);
  // The images' captions say what their words are, as every write path leaves them.
  await setImageCaption(sql, images[0].short_id, a, "manual");
  await setImageCaption(sql, images[1].short_id, b, "manual");
});

Deno.test("merge-into moves the caption when the other image has none", async () => {
  printed = ""; // recognition finds no words on `into`
  const into = await newImage();
  assert.equal((await waitForText(into.short_id)).text, "");
  printed = "THIS IS FINE";
  const from = await newImage();
  await setImageCaption(svc.services.sql, from.short_id, "MOVED WORDS", "manual");
  const res = await svc.app.request(`/api/v1/images/${from.short_id}/merge-into/${into.short_id}`, {
    method: "POST",
    headers: auth,
  });
  assert.equal(res.status, 200);
  const merged: ImageDto = await res.json();
  assert.deepEqual([merged.text, merged.text_source], ["MOVED WORDS", "manual"]);
  assert.deepEqual(await search({ q: "moved words" }), [into.short_id]);
});

/**
 * A first page of a caption search without exclusions, sent through a traced client of its own:
 * the statement as sent (for EXPLAIN) and how many rows it found.
 */
async function sentSearch(
  opts: Pick<Parameters<typeof searchImagesByCaption>[1], "words" | "tags" | "limit" | "method">,
) {
  let found = 0;
  const statement = await sentStatement(svc.db.url, async (sql) => {
    found = (await searchImagesByCaption(sql, { ...opts, exclude: [], after: null })).length;
  }, /with q as/);
  return { statement, found };
}

Deno.test("a word and a tag of similar counts are merged on the search pool's generic plan", async () => {
  // With the other checks on the word's scan, the generic plan probed the tag per image instead.
  // A database of its own: the plan of a few rows depends on the tables' sizes, and on the
  // service's database those were whatever the tests that ran before had left (on an empty one,
  // TEST_SHUFFLE_SEED=2047031503, the join was a nested loop). 300 other images, a third of them
  // with another tag, then six with the tag and the word.
  const db = await migratedDatabase();
  const searchSql = createSearchSql(db.url, 2);
  try {
    await db.sql`insert into images (short_id, hash, content_type, size_bytes, width, height)
      select lpad(g::text, 8, '0'), md5(g::text), 'image/png', 1, 1, 1
      from generate_series(1, 306) g`;
    await db.sql`insert into tags (name) values ('mj'), ('other')`;
    await db.sql`insert into image_tags (image_id, tag_id, image_seq)
      select i.id, t.id, i.seq from images i cross join tags t
      where (t.name = 'mj' and i.seq > 300) or (t.name = 'other' and i.seq <= 300 and i.seq % 3 = 0)`;
    const six = await db.sql<{ short_id: string }[]>`
      select short_id from images where seq > 300 order by seq`;
    assert.equal(six.length, 6);
    for (const [i, { short_id }] of six.entries()) {
      await setImageCaption(db.sql, short_id, i % 2 ? "MERGE ME" : "MERGE", "manual");
    }
    let found = 0;
    const statement = await sentStatement(db.url, async (sql) => {
      found = (await searchImagesByCaption(sql, {
        words: ["merge"],
        tags: ["mj"],
        exclude: [],
        limit: 51,
        after: null,
        method: "merge",
      })).length;
    }, /with q as/);
    assert.equal(found, 6);
    // The plan of a few rows depends on whether statistics were gathered yet (a CI run's
    // autovacuum analysed mid-suite and the join became a hash join of both lists): gathered here,
    // and hash joins off, as on these tables reading both lists whole is the cheapest (at a million
    // images it is not: bench/plans/caption_word_tag_merged.txt). What is asserted is that the two
    // lists are joined in image order, not one probed per image of the other.
    await db.sql`analyze image_words, image_tags, images, caption_words, tags`;
    const plan = await explainWith(searchSql, statement, {
      plan_cache_mode: "force_generic_plan",
      enable_hashjoin: "off",
    });
    // The join of the word's images with the tag's (`m`), not the final one with `images`.
    assert.match(
      plan,
      /Merge Cond: \((m\.image_seq = d\w*|d\w*\.image_seq = m)\.image_seq\)/,
      plan,
    );
  } finally {
    await searchSql.end();
    await db.drop();
  }
});

Deno.test("the counts choose each level's way: the index where lists never meet, a walk or a merge where it pays", async () => {
  // A database of its own, so that the image total the choice weighs the counts against is known:
  // 3,000 images, `common` on the first 800, `other` on the next 800, `rare` on the first;
  // `few` tags 3 images and `some` 40 that carry no word, `with` the 800 that carry `common`.
  const db = await migratedDatabase();
  const searchSql = createSearchSql(db.url, 2);
  try {
    await db.sql`insert into images (short_id, hash, content_type, size_bytes, width, height)
      select lpad(g::text, 8, '0'), md5(g::text), 'image/png', 1, 1, 1
      from generate_series(1, 3000) g`;
    await db.sql`insert into caption_words (word) values ('common'), ('other'), ('rare')`;
    await db.sql`insert into image_words (word_id, image_seq, image_id)
      select w.id, i.seq, i.id from images i cross join caption_words w
      where (w.word = 'common' and i.seq <= 800) or (w.word = 'other' and i.seq between 801 and 1600)
         or (w.word = 'rare' and i.seq = 1)`;
    await db.sql`insert into tags (name) values ('few'), ('some'), ('with')`;
    await db.sql`insert into image_tags (image_id, tag_id, image_seq)
      select i.id, t.id, i.seq from images i cross join tags t
      where (t.name = 'few' and i.seq between 2001 and 2003)
         or (t.name = 'some' and i.seq between 2001 and 2040) or (t.name = 'with' and i.seq <= 800)`;
    await db.sql`analyze`;
    /** The way the exact level took: the node of the index or of the merge that ran, else a walk. */
    const exactWay = async (words: string[], tags: string[] = []) => {
      const statement = await sentStatement(db.url, async (sql) => {
        await searchImagesByCaption(sql, { words, tags, exclude: [], limit: 51, after: null });
      }, /with q as/);
      const plan = await explainWith(
        searchSql,
        { ...statement, query: `(analyze) ${statement.query}` },
        { plan_cache_mode: "force_generic_plan" },
      );
      const lines = plan.split("\n");
      const ran = (at: number) => {
        assert.ok(at > 0, plan);
        const node = lines.slice(0, at + 1).findLast((l) => l.includes("(cost="));
        assert.ok(node, plan);
        return !node.includes("never executed");
      };
      // The first node reading images by `word_ids @> …` is the exact level's index (a sequential
      // scan where the planner prefers one; PostgreSQL 15 names its value `$n`, 18
      // `(InitPlan n).col1`); the merge's scan of the tag is `image_tags m`.
      const index = ran(lines.findIndex((l) => l.includes("(word_ids @> ")));
      const merge = tags.length > 0 && ran(lines.findIndex((l) => / on image_tags m /.test(l)));
      assert.ok(!(index && merge), plan);
      return index ? "index" : merge ? "merge" : "walk";
    };
    // A walk of either common word would read all 800 of its images and find nothing.
    assert.equal(await exactWay(["common", "other"]), "index", "two common words");
    // One candidate to walk, against 800 postings to step through.
    assert.equal(await exactWay(["rare", "common"]), "walk", "a rare word");
    // The index steps through the word's 800 postings three times: cheaper than walking the tag's
    // 3 images and probing each (counted as reading both lists whole, it walked).
    assert.equal(await exactWay(["common"], ["few"]), "index", "a common word, a rare tag");
    // Within the merge's ratio, but a merge reads both lists whole when they never meet.
    assert.equal(await exactWay(["other"], ["some"]), "index", "a word, a tag, never meeting");
    // The index would read every image the two lists share; the merge stops at the page.
    assert.equal(await exactWay(["common"], ["with"]), "merge", "a word and a tag that meet");
  } finally {
    await searchSql.end();
    await db.drop();
  }
});

Deno.test("the exact level's walk of a tag stops at the page of exact hits", async () => {
  // One walk serves both levels: it must still end where the exact level's page is full (its
  // window's count of exact hits, a run condition), not at the end of the tag's images.
  const tag = `wk_${crypto.randomUUID().slice(0, 6)}`;
  const word = randomWord(9);
  for (let i = 0; i < 12; i++) {
    const image = await uncaptionedImage([tag]);
    await setImageCaption(svc.services.sql, image.short_id, word.toUpperCase(), "manual");
  }
  // More images carry the word than the tag: the tag drives the walk.
  for (let i = 0; i < 3; i++) {
    const image = await uncaptionedImage();
    await setImageCaption(svc.services.sql, image.short_id, word.toUpperCase(), "manual");
  }
  const { statement, found } = await sentSearch({
    words: [word],
    tags: [tag],
    limit: 3,
    method: "walk",
  });
  assert.equal(found, 3);
  const plan = await explainWith(
    svc.services.searchSql!,
    { ...statement, query: `(analyze) ${statement.query}` },
    { plan_cache_mode: "force_generic_plan" },
  );
  const walked = plan.match(/WindowAgg .*actual time=\S+ rows=(\d+)/);
  assert.ok(walked, plan);
  assert.equal(Number(walked[1]), 3, plan);
});

Deno.test("merge-into keeps the other image's own caption", async () => {
  const into = await uncaptionedImage();
  const from = await uncaptionedImage();
  await setImageCaption(svc.services.sql, into.short_id, "KEPT WORDS", "manual");
  await setImageCaption(svc.services.sql, from.short_id, "DROPPED WORDS", "manual");
  assert.equal((await getImage(from.short_id)).text, "DROPPED WORDS");
  const res = await svc.app.request(`/api/v1/images/${from.short_id}/merge-into/${into.short_id}`, {
    method: "POST",
    headers: auth,
  });
  assert.equal(res.status, 200);
  const merged: ImageDto = await res.json();
  assert.deepEqual([merged.text, merged.text_source], ["KEPT WORDS", "manual"]);
  assert.deepEqual(await search({ q: "kept" }), [into.short_id]);
  assert.deepEqual(await search({ q: "dropped" }), []);
});
