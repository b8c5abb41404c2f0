/**
 * The image list's cache (LISTING_CACHE_ENTRIES): a page is loaded once while the database does
 * not change, and any write, from this process or another, makes the next request load it again.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { createReadModel } from "../services/read_model.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, randomTag, upload } from "./_harness/images.ts";

const svc = await startService();
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);

/** A read model on its own connections, counting the image list statements it runs. */
function countingReadModel(entries: number) {
  const counter = { listings: 0, tagLists: 0 };
  const sql = postgres(svc.db.url, {
    max: 4,
    onnotice: () => {},
    debug: (_conn, query) => {
      if (query.includes("json_agg(")) counter.listings++; // every image listing
      if (query.includes("select name, image_count from tags")) counter.tagLists++;
    },
  });
  return { read: createReadModel(sql, undefined, entries), counter, sql };
}

type Counting = ReturnType<typeof countingReadModel>;

/**
 * The cache keys on pg_current_snapshot(), which is cluster-wide: a write to any database of the
 * server (other test files run beside this one) is a correct miss. So a claim that calls were
 * served from the cache is checked on a fresh counting read model, retried until the snapshot
 * held still from before the first call to after the last. Under `--parallel` on a busy machine
 * the other files write almost all the time: the attempts are spaced out, with a growing random
 * pause, to land in one of their gaps, for up to two minutes. The caller ends the model's `sql`.
 */
async function whileStill(entries: number, calls: (read: Counting["read"]) => Promise<void>) {
  const snapshot = async () =>
    (await svc.db.sql<{ s: string }[]>`select pg_current_snapshot()::text as s`)[0].s;
  const deadline = Date.now() + 120_000;
  for (let attempt = 0; Date.now() < deadline; attempt++) {
    if (attempt > 0) {
      const pause = Math.min(250, 10 * attempt) * (0.5 + Math.random());
      await new Promise((r) => setTimeout(r, pause));
    }
    const model = countingReadModel(entries);
    let still = false;
    try {
      const before = await snapshot();
      await calls(model.read);
      still = (await snapshot()) === before;
    } finally {
      if (!still) await model.sql.end();
    }
    if (still) return model;
  }
  throw new Error("the database cluster never held still for the calls in two minutes");
}

async function newImage(tags: string[]) {
  const res = await upload(svc.app, auth, await makeImage("png", 32, 24), tags);
  assert.equal(res.status, 201, await res.clone().text());
  return await res.json();
}

Deno.test("a page is loaded once while nothing is written, and again after any write", async () => {
  const tag = randomTag("cached");
  const first = await newImage([tag]);
  const q = { tags: [tag], limit: 10 };
  const { read, counter, sql } = await whileStill(16, async (read) => {
    const a = await read.listImages(q);
    const b = await read.listImages(q);
    assert.deepEqual(b, a);
  });
  try {
    assert.equal(counter.listings, 1, "the second request was served from the cache");

    // A write through the service (another pool, as another process would be).
    const second = await newImage([tag]);
    const c = await read.listImages(q);
    assert.equal(counter.listings, 2);
    assert.deepEqual(c.items.map((i) => i.short_id), [second.short_id, first.short_id]);
    assert.equal(c.items[0].tags[0].image_count, 2);

    // A write straight to the database that the service never saw: a tag count changes.
    const other = postgres(svc.db.url, { max: 1, onnotice: () => {} });
    try {
      await other`update tags set image_count = image_count + 40 where name = ${tag}`;
    } finally {
      await other.end();
    }
    const d = await read.listImages(q);
    assert.equal(counter.listings, 3);
    assert.equal(d.items[0].tags[0].image_count, 42);
  } finally {
    await sql.end();
  }
});

Deno.test("pages of different queries are kept apart; tag order does not matter", async () => {
  const [x, y] = [randomTag("x"), randomTag("y")];
  const both = await newImage([x, y]);
  const onlyX = await newImage([x]);
  const ids = (p: { items: { short_id: string }[] }) => p.items.map((i) => i.short_id);
  const { counter, sql } = await whileStill(16, async (read) => {
    assert.deepEqual(ids(await read.listImages({ tags: [x], limit: 10 })), [
      onlyX.short_id,
      both.short_id,
    ]);
    assert.deepEqual(ids(await read.listImages({ tags: [x, y], limit: 10 })), [both.short_id]);
    assert.deepEqual(ids(await read.listImages({ tags: [y, x], limit: 10 })), [both.short_id]);
    const one = await read.listImages({ tags: [x], limit: 1 });
    assert.deepEqual(ids(one), [onlyX.short_id]);
    const next = await read.listImages({ tags: [x], limit: 1, cursor: one.next_cursor });
    assert.deepEqual(ids(next), [both.short_id]);
  });
  try {
    assert.equal(counter.listings, 4, "[y, x] was the page of [x, y]");
  } finally {
    await sql.end();
  }
});

Deno.test("tag lists are kept the same way, and a new tag shows at once", async () => {
  const prefix = randomTag("tl");
  await newImage([`${prefix}_a`]);
  const q = { q: prefix, sort: "name" as const, limit: 10, offset: 0 };
  const names = (tags: { name: string }[]) => tags.map((t) => t.name);
  const { read, counter, sql } = await whileStill(16, async (read) => {
    assert.deepEqual(names(await read.listTags(q)), [`${prefix}_a`]);
    assert.deepEqual(names(await read.listTags(q)), [`${prefix}_a`]);
  });
  try {
    assert.equal(counter.tagLists, 1);
    await read.listTags({ ...q, sort: "count_desc" });
    assert.equal(counter.tagLists, 2, "another query is another entry");
    await newImage([`${prefix}_b`]);
    assert.deepEqual(names(await read.listTags(q)), [`${prefix}_a`, `${prefix}_b`]);
    assert.equal(counter.tagLists, 3);
  } finally {
    await sql.end();
  }
});

Deno.test("LISTING_CACHE_ENTRIES=0 loads every page", async () => {
  const tag = randomTag("uncached");
  await newImage([tag]);
  const { read, counter, sql } = countingReadModel(0);
  try {
    await read.listImages({ tags: [tag], limit: 10 });
    await read.listImages({ tags: [tag], limit: 10 });
    assert.equal(counter.listings, 2);
  } finally {
    await sql.end();
  }
});

Deno.test("the service's own list reflects an upload, a tag edit and a delete at once", async () => {
  const tag = randomTag("fresh");
  const list = async () => (await (await svc.app.request(`/api/v1/images?tags=${tag}`)).json());
  assert.deepEqual((await list()).items, []);
  const img = await newImage([tag]);
  assert.equal((await list()).items.length, 1);
  const patched = await svc.app.request(`/api/v1/images/${img.short_id}/tags`, {
    method: "PATCH",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ add: ["also_" + tag] }),
  });
  assert.equal(patched.status, 200);
  assert.deepEqual((await list()).items[0].tags.map((t: { name: string }) => t.name).sort(), [
    "also_" + tag,
    tag,
  ]);
  const deleted = await svc.app.request(`/api/v1/images/${img.short_id}`, {
    method: "DELETE",
    headers: auth,
  });
  assert.equal(deleted.status, 204);
  assert.deepEqual((await list()).items, []);
});
