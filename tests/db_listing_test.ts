/**
 * The listing statements of db/images.ts on 20,000 images with 200 tags of Zipf-like popularity:
 * they return exactly what a plain query of every image's tag names returns, whichever strategy
 * the statement picks, and PostgreSQL keeps their generic plans. postgres.js prepares every
 * statement; PostgreSQL plans the first five executions for their parameters and then keeps the
 * generic plan only if it is estimated to cost no more. When it is not, every request is planned
 * afresh, which cost about as much database CPU as running the page at a million images (bench
 * B5).
 */
import assert from "node:assert/strict";
import { createSql } from "../db/client.ts";
import { type ListedImages, listImages, TAG_MERGE_MAX_RATIO } from "../db/images.ts";
import { createReadModel } from "../services/read_model.ts";
import type { ImagePage } from "../domain/types.ts";
import { migratedDatabase } from "./_harness/db.ts";
import { explainWith, sentStatement } from "./_harness/plans.ts";

const db = await migratedDatabase();
Deno.test.afterAll(() => db.drop());
await db.sql.unsafe(`
  insert into images (short_id, hash, content_type, size_bytes, width, height)
    select lpad(to_hex(i), 8, '0'), md5(i::text) || md5('h' || i), 'image/png', 1000, 10, 10
    from generate_series(1, 20000) i;
  insert into tags (name) select 't' || r from generate_series(1, 200) r;
  select setseed(0.5);
  alter table image_tags disable trigger image_tags_count; -- kept once below, not per row
  insert into image_tags (image_id, tag_id, image_seq)
    select i.id, least(200, floor(exp(random() * ln(201))))::bigint, i.seq
    from images i cross join generate_series(1, 3) on conflict do nothing;
  alter table image_tags enable trigger image_tags_count;
  update tags t set image_count = (select count(*) from image_tags where tag_id = t.id);
  update images i set tag_ids = array(
    select tag_id from image_tags where image_id = i.id order by tag_id);
  analyze`);
await db.sql`vacuum analyze`; // as autovacuum leaves a table: index-only scans read no heap

/**
 * The page a plain query gives: each image's tag names gathered whole, kept when they contain all
 * of `tags` and none of `exclude`, older than `beforeSeq`, newest first, cut at `limit`. Image
 * seqs.
 */
async function expected(
  tags: string[],
  limit: number,
  beforeSeq: string | null,
  exclude: string[] = [],
) {
  const rows = await db.sql<{ seq: string }[]>`
    with named as (
      select it.image_id, array_agg(t.name) as names
      from image_tags it join tags t on t.id = it.tag_id group by it.image_id)
    select i.seq::text as seq from images i left join named n on n.image_id = i.id
    where coalesce(n.names, '{}') @> ${tags}::text[]
      and not coalesce(n.names, '{}') && ${exclude}::text[]
      and (${beforeSeq}::bigint is null or i.seq < ${beforeSeq}::bigint)
    order by i.seq desc limit ${limit}`;
  return rows.map((r) => r.seq);
}

const [{ seq: middle }] = await db.sql`select seq::text as seq from images order by seq desc
                                       offset 1000 limit 1`;

Deno.test("tag pages equal a plain query's, merged or probed, with and without a cursor", async () => {
  const count = async (name: string) =>
    (await db.sql`select image_count from tags where name = ${name}`)[0].image_count as number;
  const [t1, t2, t150] = [await count("t1"), await count("t2"), await count("t150")];
  assert.ok(t1 <= TAG_MERGE_MAX_RATIO * t2, `t1 (${t1}) and t2 (${t2}) are merged`);
  assert.ok(t1 > TAG_MERGE_MAX_RATIO * t150, `t1 (${t1}) and t150 (${t150}) are probed`);
  const cases = [
    ["t1"],
    ["t150"],
    ["t1", "t2"], // similar sizes: merged
    ["t2", "t1"],
    ["t1", "t150"], // one rare: probed
    ["t3", "t4", "t5"], // merged, then probed
    ["t1", "t2", "t150"],
    ["t7", "t9"],
    ["t1", "no_such_tag"],
    ["t1", "t2", "t3", "t4", "t5"],
    Array.from({ length: 20 }, (_, i) => `t${i + 1}`),
    ["no_such_tag"],
  ];
  for (const tags of cases) {
    for (const limit of [1, 51, 201]) {
      for (const beforeSeq of [null, middle]) {
        const got = (await listImages(db.sql, { tags, limit, beforeSeq })).map((r) => r.seq);
        assert.deepEqual(
          got,
          await expected(tags, limit, beforeSeq),
          `${tags} ${limit} ${beforeSeq}`,
        );
      }
    }
  }
  // Paging with the cursor through a merged intersection reaches every image exactly once.
  // Exclusions, alone or with tags, popular or rare, known or not.
  const excluding: [string[], string[]][] = [
    [[], ["t1"]],
    [[], ["t1", "t2", "t150"]],
    [["t1"], ["t2"]],
    [["t150"], ["t1"]],
    [["t1", "t2"], ["t3"]],
    [["t1", "t150"], ["t4", "no_such_tag"]],
    [["t3", "t4", "t5"], ["t1"]],
    [["t1"], ["t1"]],
    [[], ["no_such_tag"]],
  ];
  for (const [tags, exclude] of excluding) {
    for (const beforeSeq of [null, middle]) {
      const got = (await listImages(db.sql, { tags, exclude, limit: 51, beforeSeq }))
        .map((r) => r.seq);
      assert.deepEqual(got, await expected(tags, 51, beforeSeq, exclude), `${tags} -${exclude}`);
    }
  }
  const all = await expected(["t1", "t2"], 20000, null);
  assert.ok(all.length > 300, `${all.length} images carry t1 and t2`);
  const seen: string[] = [];
  let beforeSeq: string | null = null;
  while (true) {
    const rows = await listImages(db.sql, { tags: ["t1", "t2"], limit: 51, beforeSeq });
    seen.push(...rows.map((r) => r.seq));
    if (rows.length < 51) break;
    beforeSeq = rows[rows.length - 1].seq;
  }
  assert.deepEqual(seen, all);
});

Deno.test("tag counts near the integer limit do not overflow the choice of strategy", async () => {
  const before = await listImages(db.sql, { tags: ["t1", "t2"], limit: 51, beforeSeq: null });
  await db.sql`update tags set image_count = 2000000000 where name in ('t1', 't2')`;
  try {
    const after = await listImages(db.sql, { tags: ["t1", "t2"], limit: 51, beforeSeq: null });
    assert.deepEqual(after.map((r) => r.seq), before.map((r) => r.seq));
  } finally {
    await db
      .sql`update tags t set image_count = (select count(*) from image_tags where tag_id = t.id)
                 where name in ('t1', 't2')`;
  }
});

Deno.test("listing statements switch to a generic plan after five executions", async () => {
  const sql = createSql(db.url, { max: 1 }); // one connection: one set of prepared statements
  try {
    const pages = [
      { tags: [], beforeSeq: null },
      { tags: [], beforeSeq: middle },
      { tags: ["t1"], beforeSeq: null },
      { tags: ["t150"], beforeSeq: middle },
      { tags: ["t2", "t3"], beforeSeq: null },
      { tags: ["t1", "t150"], beforeSeq: middle },
      { tags: ["t3", "t4", "t5"], beforeSeq: null },
      { tags: Array.from({ length: 20 }, (_, i) => `t${i + 1}`), beforeSeq: middle },
      { tags: [], exclude: ["t1"], beforeSeq: null },
      { tags: ["t2"], exclude: ["t1", "t3"], beforeSeq: middle },
      { tags: ["t2", "t3"], exclude: ["t150"], beforeSeq: null },
    ];
    for (let run = 0; run < 8; run++) {
      for (const p of pages) await listImages(sql, { ...p, limit: 51 });
    }
    const statements = await sql<{ statement: string; generic: number; custom: number }[]>`
      select statement, generic_plans::int as generic, custom_plans::int as custom
      from pg_prepared_statements
      where statement ~ 'from images i|from image_tags d' and statement !~ 'pg_prepared'`;
    assert.equal(statements.length, 3, "no tag, one tag, two tags");
    for (const s of statements) {
      assert.ok(
        s.generic > 0 && s.custom <= 5,
        `planned afresh every time (${s.custom} custom plans, ${s.generic} generic):\n${s.statement}`,
      );
    }
  } finally {
    await sql.end();
  }
});

Deno.test("any number of distinct requests prepares three listing statements", async () => {
  const sql = createSql(db.url, { max: 1 }); // one connection: one set of prepared statements
  try {
    // Before, each (tag count, page size, cursor or not) had its own statement: 20,000 shapes.
    // Exclusions are one more bound array, whatever their number.
    for (let n = 0; n <= 50; n++) {
      const tags = Array.from({ length: n }, (_, i) => `t${i + 1}`);
      for (const limit of [1 + n, 51 + n, 201 - n]) {
        const exclude = Array.from({ length: n % 7 }, (_, i) => `t${60 + i}`);
        await listImages(sql, { tags, exclude, limit, beforeSeq: n % 2 ? middle : null });
      }
    }
    const [{ count }] = await sql<{ count: number }[]>`
      select count(*)::int as count from pg_prepared_statements
      where statement ~ 'from images i|from image_tags d' and statement !~ 'pg_prepared'`;
    assert.equal(count, 3, "no tag, one tag, several tags");
  } finally {
    await sql.end();
  }
});

Deno.test("an exclusion is checked per candidate, never by reading every image of the tag", async () => {
  // `not exists` was turned into a hash anti-join that read all of the excluded tag's images
  // first: 1.1 s for `t2,-t1` at a million images (bench B9), against 1.7 ms probed.
  for (const tags of [[], ["t2"], ["t2", "t3"]]) {
    const statement = await sentStatement(
      db.url,
      (sql) => listImages(sql, { tags, exclude: ["t1"], limit: 51, beforeSeq: null }),
      /from images i|image_tags d/,
    );
    const plan = await explainWith(db.sql, statement);
    assert.ok(!/Hash (Anti|Right Anti)/.test(plan), `${tags}:\n${plan}`);
    if (tags.length < 2) {
      // Checked on the candidate's own row, which the page reads anyway.
      assert.match(plan, /Filter: \(NOT \((i(_\d+)?\.)?tag_ids && /, `${tags}:\n${plan}`);
      assert.ok(!/image_tags x/.test(plan), `${tags}: no probe of image_tags:\n${plan}`);
    } else {
      assert.match(plan, /Index Only Scan using \S+ on image_tags x/, "probed per candidate");
    }
  }
});

Deno.test("two tags of similar size are merged in image order, exclusions or not", async () => {
  // A probe on the first tag's scan had turned the merge into a probe per image of that tag in
  // the generic plan that the service keeps (B5's two-tag listings: p99 29-37 ms, 20-22 merged).
  for (const exclude of [[], ["t150"]]) {
    const statement = await sentStatement(
      db.url,
      (sql) => listImages(sql, { tags: ["t1", "t2"], exclude, limit: 51, beforeSeq: null }),
      /image_tags d/,
    );
    const plan = await explainWith(db.sql, statement, { plan_cache_mode: "force_generic_plan" });
    assert.match(plan, /Merge Join/, `exclude ${exclude}:\n${plan}`);
  }
});

/** The most rows that one scan of images or image_tags read (one loop), in an EXPLAIN ANALYZE. */
const mostRowsOfAScan = (plan: string) =>
  Math.max(
    ...[...plan.matchAll(/Scan\b.* on (?:images|image_tags)\b.*\(actual rows=(\d+)/g)]
      .map((m) => Number(m[1])),
  );

Deno.test("a bounded walk ends its page after `examine` candidates, and paging by its resume position sees every image once", async () => {
  // `most`: every image but one in 500, as an import's tag is (the README's import example).
  await db.sql`insert into tags (name) values ('most')`;
  await db.sql`insert into image_tags (image_id, tag_id, image_seq)
    select i.id, t.id, i.seq from images i, tags t where t.name = 'most' and i.seq % 500 <> 0`;
  await db.sql`analyze`;
  try {
    const examine = 100;
    // Unbounded, the first page of `-most` reads the table back to its 52nd match (26,000 rows).
    for (const tags of [[], ["t2"], ["t1", "t2"], ["t1", "t150"]]) {
      const statement = await sentStatement(
        db.url,
        (sql) => listImages(sql, { tags, exclude: ["most"], limit: 51, beforeSeq: null, examine }),
        /from images i|image_tags d/,
      );
      const plan = await explainWith(db.sql, {
        ...statement,
        query: `(analyze, costs off, timing off) ${statement.query}`,
      });
      assert.ok(mostRowsOfAScan(plan) <= examine, `${tags}:\n${plan}`);
    }
    // The first page of `-most`: the images in the newest 100 that lack it, and where to resume.
    const [{ seq: hundredth }] = await db.sql`select seq::text as seq from images
      order by images.seq desc offset ${examine - 1} limit 1`;
    const first = await listImages(db.sql, {
      tags: [],
      exclude: ["most"],
      limit: 51,
      beforeSeq: null,
      examine,
    });
    assert.deepEqual(
      first.map((r) => r.seq),
      (await expected([], 51, null, ["most"])).filter((s) => BigInt(s) >= BigInt(hundredth)),
    );
    assert.equal(first.resume, hundredth);
    // A full page, or a page whose walk reached the end, has nothing to resume.
    const full = await listImages(db.sql, { tags: [], limit: 51, beforeSeq: null, examine });
    assert.deepEqual([full.length, full.resume], [51, null]);
    const rare = await listImages(db.sql, { tags: ["t150"], limit: 51, beforeSeq: null, examine });
    assert.equal(rare.resume, null, `t150 has fewer than ${examine} images`);

    // Paged as the read model pages (limit + 1 rows; next: the extra row's, else the resume).
    const cases: [string[], string[]][] = [
      [[], ["most"]],
      [["t2"], ["most"]],
      [["t1", "t2"], ["most"]], // merged
      [["t1", "t30"], ["most"]], // probed (t30: some 370 images)
      [["t1", "t2", "t3"], []], // three tags that meet rarely
    ];
    for (const [tags, exclude] of cases) {
      const seen: string[] = [];
      let beforeSeq: string | null = null;
      let pages = 0;
      do {
        const rows: ListedImages = await listImages(db.sql, {
          tags,
          exclude,
          limit: 21,
          beforeSeq,
          examine,
        });
        seen.push(...rows.slice(0, 20).map((r) => r.seq));
        beforeSeq = rows.length > 20 ? rows[19].seq : rows.resume;
        assert.ok(++pages < 1000, "paging ends");
      } while (beforeSeq !== null);
      assert.deepEqual(seen, await expected(tags, 20000, null, exclude), `${tags} -${exclude}`);
      assert.ok(pages > 1, `${tags} -${exclude}: resumed, ${pages} pages`);
    }
  } finally {
    await db.sql`delete from image_tags where tag_id = (select id from tags where name = 'most')`;
    await db.sql`delete from tags where name = 'most'`;
    await db.sql`analyze`;
  }
});

Deno.test("the read model's next_cursor resumes a page that stopped at its bound", async () => {
  await db.sql`insert into tags (name) values ('most2')`;
  await db.sql`insert into image_tags (image_id, tag_id, image_seq)
    select i.id, t.id, i.seq from images i, tags t where t.name = 'most2' and i.seq % 500 <> 0`;
  try {
    const read = createReadModel(db.sql, undefined, 0, db.sql, 100);
    const seen: string[] = [];
    let cursor: string | null = null;
    let short = 0;
    do {
      const page: ImagePage = await read.listImages({
        tags: [],
        exclude: ["most2"],
        limit: 50,
        cursor,
      });
      seen.push(...page.items.map((i) => i.short_id));
      if (page.items.length < 50 && page.next_cursor) short++;
      cursor = page.next_cursor;
    } while (cursor);
    const all = await db.sql<{ short_id: string }[]>`
      select short_id from images where seq % 500 = 0 order by seq desc`;
    assert.deepEqual(seen, all.map((r) => r.short_id));
    assert.ok(short > 100, `${short} short pages with a next_cursor`);
  } finally {
    await db.sql`delete from image_tags where tag_id = (select id from tags where name = 'most2')`;
    await db.sql`delete from tags where name = 'most2'`;
  }
});
