/**
 * insertImage() (db/images.ts) sends its statements in one pipelined batch, each finding the new
 * row by its short ID. These tests pin what that batch must still guarantee: the stored image
 * comes back with its tags and counts, the upload's pending keys are forgotten only when its row
 * went in, and an upload that lost the hash to another changes nothing.
 */
import assert from "node:assert/strict";
import { insertImage } from "../db/images.ts";
import { scheduleDeletes } from "../db/pending_deletes.ts";
import { imageRow as image, migratedDatabase } from "./_harness/db.ts";

const db = await migratedDatabase();
Deno.test.afterAll(() => db.drop());

const keysOf = (shortId: string) => [`images/${shortId}`, `thumbnails/${shortId}.webp`];
/** The pending keys of `shortId`'s objects (the file's other tests leave their own). */
const pendingKeys = async (shortId: string) =>
  (await db.sql<{ key: string }[]>`
    select key from pending_deletes where key = any(${keysOf(shortId)}) order by key`)
    .map((r) => r.key);

Deno.test("a new image comes back as stored, tags by name with counts, its keys forgotten", async () => {
  await db.sql`insert into tags (name) values ('zebra')`;
  await scheduleDeletes(db.sql, keysOf("Ins00001"), 3600);
  const stored = await insertImage(
    db.sql,
    image("Ins00001", "a".repeat(64)),
    ["zebra", "apple"],
    keysOf("Ins00001"),
  );
  assert.ok(stored);
  assert.equal(stored.short_id, "Ins00001");
  assert.equal(stored.size_bytes, 1234);
  assert.equal(stored.thumbnail_key, "thumbnails/Ins00001.webp");
  assert.deepEqual(stored.tags, [
    { name: "apple", image_count: 1 },
    { name: "zebra", image_count: 1 },
  ]);
  assert.deepEqual(await pendingKeys("Ins00001"), []);

  const bare = await insertImage(db.sql, image("Ins00002", "b".repeat(64)), []);
  assert.deepEqual(bare?.tags, []);
});

Deno.test("an upload that lost the hash gets null; its keys stay pending, the winner is unchanged", async () => {
  const hash = "c".repeat(64);
  const winner = await insertImage(db.sql, image("Win00001", hash), ["cat"]);
  assert.ok(winner);
  await scheduleDeletes(db.sql, keysOf("Los00001"), 3600);
  const loser = await insertImage(
    db.sql,
    image("Los00001", hash),
    ["dog", "cat"],
    keysOf("Los00001"),
  );
  assert.equal(loser, null);
  // The sweeper must still remove the loser's objects: no row owns them.
  assert.deepEqual(await pendingKeys("Los00001"), keysOf("Los00001").sort());
  const [row] = await db.sql<{ n: number; tags: string[] }[]>`
    select (select count(*)::int from images where hash = ${hash}) as n,
           array(select t.name from image_tags it join tags t on t.id = it.tag_id
                 join images i on i.id = it.image_id where i.hash = ${hash} order by t.name) as tags`;
  assert.deepEqual(row, { n: 1, tags: ["cat"] });
  const [cat] = await db.sql<{ image_count: number }[]>`
    select image_count from tags where name = 'cat'`;
  assert.equal(cat.image_count, 1);
});

Deno.test("concurrent inserts sharing new tags all link them, with exact counts", async () => {
  const names = ["shared-1", "shared-2", "shared-3"];
  const results = await Promise.all(
    Array.from(
      { length: 8 },
      (_, i) =>
        insertImage(db.sql, image(`Con0000${i}`, String(i).repeat(64)), [...names].reverse()),
    ),
  );
  for (const r of results) assert.deepEqual(r?.tags.map((t) => t.name), names);
  const counts = await db.sql<{ image_count: number }[]>`
    select image_count from tags where name = any(${names}::text[])`;
  assert.deepEqual(counts.map((c) => c.image_count), [8, 8, 8]);
});
