import assert from "node:assert/strict";
import { SnapshotCache } from "./snapshot_cache.ts";

/** A cache whose database snapshot is `at.now`. */
function cacheAt<T>(maxEntries: number, at = { now: "s" }) {
  return new SnapshotCache<T>(maxEntries, () => Promise.resolve(at.now));
}

/** A load that counts its calls and returns `value`. */
function counted<T>(value: T) {
  const load = () => {
    load.calls++;
    return Promise.resolve(value);
  };
  load.calls = 0;
  return load;
}

Deno.test("SnapshotCache: the same snapshot is served from the cache, a new one loads again", async () => {
  const at = { now: "1:5:" };
  const cache = cacheAt<string>(10, at);
  const first = counted("page at s1");
  assert.equal(await cache.get("newest", first), "page at s1");
  assert.equal(await cache.get("newest", first), "page at s1");
  assert.equal(first.calls, 1);
  const second = counted("page at s2");
  at.now = "1:6:";
  assert.equal(await cache.get("newest", second), "page at s2");
  assert.equal(second.calls, 1);
  // Snapshots only move forward; the old entry was replaced, not kept beside the new one.
  assert.equal(cache.size, 1);
});

Deno.test("SnapshotCache: keys are kept apart", async () => {
  const cache = cacheAt<string>(10);
  assert.equal(await cache.get("tags=a", counted("a")), "a");
  assert.equal(await cache.get("tags=b", counted("b")), "b");
  assert.equal(await cache.get("tags=a", counted("not loaded")), "a");
});

Deno.test("SnapshotCache: concurrent lookups share one load", async () => {
  const cache = cacheAt<number>(10);
  let calls = 0;
  let release: ((v: number) => void) | undefined;
  const load = () => {
    calls++;
    return new Promise<number>((r) => (release = r));
  };
  const all = Promise.all(Array.from({ length: 8 }, () => cache.get("k", load)));
  while (!release) await Promise.resolve(); // the load starts once the snapshot is read
  release(42);
  assert.deepEqual(await all, Array(8).fill(42));
  assert.equal(calls, 1);
});

Deno.test("SnapshotCache: a failed load is not kept", async () => {
  const cache = cacheAt<string>(10);
  await assert.rejects(cache.get("k", () => Promise.reject(new Error("connection lost"))));
  await Promise.resolve(); // let the cache see the rejection
  assert.equal(cache.size, 0);
  assert.equal(await cache.get("k", counted("loaded again")), "loaded again");
});

Deno.test("SnapshotCache: the least recently used entry goes first", async () => {
  const cache = cacheAt<string>(2);
  await cache.get("a", counted("a"));
  await cache.get("b", counted("b"));
  await cache.get("a", counted("not loaded")); // a is now the most recently used
  await cache.get("c", counted("c")); // evicts b
  assert.equal(cache.size, 2);
  const a = counted("a again");
  const b = counted("b again");
  assert.equal(await cache.get("a", a), "a");
  assert.equal(await cache.get("b", b), "b again");
  assert.equal(a.calls + b.calls, 1);
});

Deno.test("SnapshotCache: 0 entries keeps nothing", async () => {
  const cache = cacheAt<string>(0);
  const load = counted("x");
  await cache.get("k", load);
  await cache.get("k", load);
  assert.equal(load.calls, 2);
  assert.equal(cache.size, 0);
});
