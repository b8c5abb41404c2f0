/**
 * updateImageTags() (db/images.ts) takes each tag row it will count before it changes any link,
 * all in one statement in ID order, so that two edits of different images that trade tags wait
 * for each other instead of deadlocking. The interleaving that deadlocked is made on purpose here:
 * a third transaction holds a new tag's name, so both edits stop after their unlinks, each holding
 * the count row of the tag the other is about to link.
 */
import assert from "node:assert/strict";
import type { Sql } from "../db/client.ts";
import { insertImage, updateImageTags } from "../db/images.ts";
import { imageRow as image, migratedDatabase } from "./_harness/db.ts";

const db = await migratedDatabase();
Deno.test.afterAll(() => db.drop());

/** The pool, counting the transactions begun through it (a deadlock's retry begins another). */
function countingBegins(sql: Sql): { sql: Sql; begins: () => number } {
  let begins = 0;
  const counting = new Proxy(sql, {
    get(target, key, receiver) {
      if (key !== "begin") return Reflect.get(target, key, receiver);
      return (...args: Parameters<Sql["begin"]>) => {
        begins++;
        return target.begin(...args);
      };
    },
  });
  return { sql: counting, begins: () => begins };
}

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

const tagsOf = async (shortId: string) =>
  (await db.sql<{ name: string }[]>`
    select t.name from image_tags it join tags t on t.id = it.tag_id
    join images i on i.id = it.image_id where i.short_id = ${shortId} order by t.name`)
    .map((r) => r.name);

type Change = Parameters<typeof updateImageTags>[2];

/**
 * Two images, tagged `trade<p>-alpha` and `trade<p>-beta`, trade those tags through
 * `change(from, to)` while a third transaction holds the name `trade<p>-new` that both edits add.
 */
async function tradeTags(p: string, change: (from: string, to: string) => Change) {
  const [one, two] = [`Trade${p}01`, `Trade${p}02`];
  const [alpha, beta, fresh] = [`trade${p}-alpha`, `trade${p}-beta`, `trade${p}-new`];
  await insertImage(db.sql, image(one, `${p}1`.padEnd(64, "1")), [alpha]);
  await insertImage(db.sql, image(two, `${p}2`.padEnd(64, "2")), [beta]);
  const counting = countingBegins(db.sql);

  // Holds the new tag's name: each edit stops at it, after its unlink and before its links.
  const holder = await db.sql.reserve();
  let open = false;
  try {
    await holder`begin`;
    open = true;
    await holder`insert into tags (name) values (${fresh})`;
    const edits = Promise.all([
      updateImageTags(counting.sql, one, change(alpha, beta)),
      updateImageTags(counting.sql, two, change(beta, alpha)),
    ]);
    await lockWaiters(2);
    await holder`commit`;
    open = false;
    assert.deepEqual(await edits, [true, true]);
  } finally {
    // A failure before the commit must not hand the pool a connection inside a transaction.
    if (open) await holder`rollback`.catch(() => {});
    holder.release();
  }

  assert.equal(counting.begins(), 2, "a transaction was retried: the two edits deadlocked");
  assert.deepEqual(await tagsOf(one), [beta, fresh]);
  assert.deepEqual(await tagsOf(two), [alpha, fresh]);
  const counts = await db.sql<{ name: string; image_count: number }[]>`
    select name, image_count from tags where name like ${`trade${p}-%`} order by name`;
  assert.deepEqual(counts.map((c) => [c.name, c.image_count]), [[alpha, 1], [beta, 1], [fresh, 2]]);
}

Deno.test("two whole-set edits that trade tags wait for each other, never deadlock", async () => {
  await tradeTags("a", (_from, to) => ({ replace: [to, "tradea-new"] }));
});

Deno.test("two edits that add and remove to trade tags wait for each other, never deadlock", async () => {
  await tradeTags("b", (from, to) => ({ add: [to, "tradeb-new"], remove: [from] }));
});
