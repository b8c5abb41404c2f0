/**
 * The stored count of shared tags on each near-duplicate pair (migration 015): exact after every
 * kind of tag change, and under the two interleavings that a count computed from a snapshot
 * would get wrong. The duplicates page reads the pairs through their order's index and stops.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { applyImplicationsBatch } from "../db/apply_implications.ts";
import { deleteImage, insertImage, updateImageTags } from "../db/images.ts";
import { listSimilarPairs, mergeImageInto, recordImageHash } from "../db/similar.ts";
import { putAlias, putImplications, renameTag } from "../db/tag_rules.ts";
import { imageRow, migratedDatabase } from "./_harness/db.ts";
import { explainWith, sentStatement } from "./_harness/plans.ts";

const db = await migratedDatabase();
Deno.test.afterAll(() => db.drop());

let serial = 0;
/** A new image with `tags` and perceptual hash `phash`, its pairs recorded; its short ID. */
async function image(tags: string[], phash: bigint): Promise<string> {
  const id = `p${String(++serial).padStart(7, "0")}`;
  await insertImage(db.sql, { ...imageRow(id, `hash-${id}`), phash }, tags);
  await recordImageHash(db.sql, id, phash, 10, 0);
  return id;
}

/** Every pair as `a+b: shared_tags` by short ID (each pair's two IDs sorted), sorted. */
async function counts(): Promise<string[]> {
  const pairs = await listSimilarPairs(db.sql, 100, 0);
  return pairs.map((p) => `${[p.a.short_id, p.b.short_id].sort().join("+")}: ${p.shared_tags}`)
    .sort();
}

Deno.test("a pair's shared tags stay exact through edits, tag renames and merges, implications, image merges and deletes", async () => {
  await db.sql`delete from images`;
  // Hashes 0, 1 and 3: every two within distance 10, so three pairs.
  const a = await image(["s_x", "s_y", "s_z"], 0n);
  const b = await image(["s_y", "s_z", "s_w"], 1n);
  const c = await image(["s_x"], 3n);
  const ab = `${a}+${b}`, ac = `${a}+${c}`, bc = `${b}+${c}`;
  assert.deepEqual(await counts(), [`${ab}: 2`, `${ac}: 1`, `${bc}: 0`]);

  await updateImageTags(db.sql, c, { add: ["s_y", "s_z"] }); // c: x y z
  assert.deepEqual(await counts(), [`${ab}: 2`, `${ac}: 3`, `${bc}: 2`]);
  await updateImageTags(db.sql, b, { remove: ["s_z"] }); // b: y w
  assert.deepEqual(await counts(), [`${ab}: 1`, `${ac}: 3`, `${bc}: 1`]);
  await updateImageTags(db.sql, a, { replace: ["s_w", "s_z"] }); // a: w z
  assert.deepEqual(await counts(), [`${ab}: 1`, `${ac}: 1`, `${bc}: 1`]);

  // A rename keeps the tag's ID: nothing to count.
  await renameTag(db.sql, "s_y", "s_q"); // b: q w, c: x q z
  assert.deepEqual(await counts(), [`${ab}: 1`, `${ac}: 1`, `${bc}: 1`]);
  // A rename onto an existing tag merges the two: w becomes x.
  await renameTag(db.sql, "s_w", "s_x"); // a: x z, b: q x, c: x q z
  assert.deepEqual(await counts(), [`${ab}: 1`, `${ac}: 2`, `${bc}: 2`]);
  // An alias whose name is a tag merges that tag into its target: z becomes q.
  await putAlias(db.sql, "s_z", "s_q"); // a: x q, b: q x, c: x q
  assert.deepEqual(await counts(), [`${ab}: 2`, `${ac}: 2`, `${bc}: 2`]);

  // Implications applied to the images already carrying the tag.
  const rule = await putImplications(db.sql, "s_x", ["s_r"]);
  assert.ok(rule.applyTo);
  await applyImplicationsBatch(db.sql, rule.applyTo, null, 100); // all: x q r
  assert.deepEqual(await counts(), [`${ab}: 3`, `${ac}: 3`, `${bc}: 3`]);
  await updateImageTags(db.sql, b, { replace: ["s_v"] }); // b: v
  assert.deepEqual(await counts(), [`${ab}: 0`, `${ac}: 3`, `${bc}: 0`]);

  // Merging c into b: b takes c's tags (v x q r), c and its pairs go.
  assert.ok(await mergeImageInto(db.sql, c, b, () => []));
  assert.deepEqual(await counts(), [`${ab}: 3`]);
  assert.ok(await deleteImage(db.sql, b, () => []));
  assert.deepEqual(await counts(), []);
});

/** Waits (at most 10 s) until `n` of this database's sessions wait for a lock. */
async function lockWaiters(n: number) {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [{ waiting }] = await db.sql<{ waiting: number }[]>`
      select count(*)::int as waiting from pg_stat_activity
      where datname = current_database() and wait_event_type = 'Lock'`;
    if (waiting >= n) return;
    if (Date.now() > deadline) throw new Error(`${waiting} of ${n} sessions wait for a lock`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A transaction on a connection of its own that links `tag` to image `shortId`, left open. */
async function openLink(shortId: string, tag: string) {
  const conn = postgres(db.url, { max: 1, onnotice: () => {} });
  let linked!: () => void;
  let commit!: () => void;
  const isLinked = new Promise<void>((r) => linked = r);
  const done = conn.begin(async (tx) => {
    await tx`insert into tags (name) values (${tag}) on conflict do nothing`;
    await tx`insert into image_tags (image_id, tag_id, image_seq)
      select i.id, t.id, i.seq from images i, tags t where i.short_id = ${shortId} and t.name = ${tag}`;
    linked();
    await new Promise<void>((r) => commit = r);
  });
  await Promise.race([isLinked, done]);
  return { commit: async () => (commit(), await done, await conn.end()) };
}

Deno.test("concurrent tag edits of both images of a pair count the tag they both gained", async () => {
  await db.sql`delete from images`;
  const a = await image(["s_k"], 0n);
  const b = await image([], 1n);
  await db.sql`insert into tags (name) values ('s_j')`;
  // Each transaction adds s_j to one image; neither sees the other's link uncommitted. The second
  // waits for the pair the first holds, then counts with both links.
  const first = await openLink(a, "s_j");
  const other = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    const second = other`insert into image_tags (image_id, tag_id, image_seq)
      select i.id, t.id, i.seq from images i, tags t where i.short_id = ${b} and t.name = 's_j'
      union all select i.id, t.id, i.seq from images i, tags t where i.short_id = ${b} and t.name = 's_k'`
      .then(() => {});
    await lockWaiters(1);
    await first.commit();
    await second;
  } finally {
    await other.end();
  }
  assert.deepEqual(await counts(), [`${[a, b].sort().join("+")}: 2`]);
});

Deno.test("a pair recorded while one of its images' tags change counts the new tags", async () => {
  await db.sql`delete from images`;
  const a = await image(["s_m"], 0n);
  const b = "pq000001";
  await insertImage(db.sql, { ...imageRow(b, "hash-pq1"), phash: 1n }, ["s_m", "s_n"]);
  // a gains s_n, uncommitted; the pair's count waits for a's row, then sees both tags.
  const edit = await openLink(a, "s_n");
  const recording = recordImageHash(db.sql, b, 1n, 10, 5);
  await lockWaiters(1);
  await edit.commit();
  assert.deepEqual((await recording).map((h) => h.short_id), [a]);
  assert.deepEqual(await counts(), [`${[a, b].sort().join("+")}: 2`]);
});

Deno.test("the duplicates page walks the pairs' order index and reads offset + limit of them", async () => {
  await db.sql`delete from images`;
  // 4,000 images in 2,000 pairs, with 0-3 shared tags.
  // 2,000 pairs of consecutive images (seq 2k-1 and 2k), sharing tags u1..u{k % 4}.
  await db.sql.unsafe(`
    insert into tags (name) select 'u' || k from generate_series(1, 3) k;
    insert into images (short_id, hash, content_type, size_bytes, width, height)
      select lpad(to_hex(n), 8, 'u'), 'u' || n, 'image/png', 1, 1, 1 from generate_series(1, 4000) n;
    insert into image_tags (image_id, tag_id, image_seq)
      select i.id, t.id, i.seq from images i join tags t on t.name like 'u_'
      where substr(t.name, 2)::int <= ((i.seq + 1) / 2) % 4;
    insert into similar_pairs (a, b, distance)
      select least(x.id, y.id), greatest(x.id, y.id), (x.seq % 7)::smallint
      from images x join images y on y.seq = x.seq + 1 where x.seq % 2 = 1;
    analyze`);
  const [{ pairs }] = await db.sql`select count(*)::int as pairs from similar_pairs`;
  assert.ok(pairs >= 1900, `${pairs} pairs`);
  for (const [limit, offset] of [[50, 0], [50, 1000]]) {
    const statement = await sentStatement(
      db.url,
      (sql) => listSimilarPairs(sql as never, limit, offset),
      /from similar_pairs/,
    );
    for (const mode of ["auto", "force_generic_plan"]) {
      const plan = await explainWith(
        db.sql,
        { ...statement, query: `(analyze, costs off, timing off) ${statement.query}` },
        { plan_cache_mode: mode },
      );
      assert.match(plan, /Index (Only )?Scan using similar_pairs_order_idx/, plan);
      assert.ok(!/Sort/.test(plan), `no sort:\n${plan}`);
      const read = Number(
        /similar_pairs_order_idx on similar_pairs p \(actual rows=(\d+)/.exec(
          plan,
        )?.[1],
      );
      assert.equal(read, limit + offset, plan);
    }
  }
});
