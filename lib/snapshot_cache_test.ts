import assert from "node:assert/strict";
import { SnapshotCache } from "./snapshot_cache.ts";

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
  const cache = new SnapshotCache<string>(10);
  const first = counted("page at s1");
  assert.equal(await cache.get("newest", "1:5:", first), "page at s1");
  assert.equal(await cache.get("newest", "1:5:", first), "page at s1");
  assert.equal(first.calls, 1);
  const second = counted("page at s2");
  assert.equal(await cache.get("newest", "1:6:", second), "page at s2");
  assert.equal(second.calls, 1);
  // Snapshots only move forward; the old entry was replaced, not kept beside the new one.
  assert.equal(cache.size, 1);
});

Deno.test("SnapshotCache: keys are kept apart", async () => {
  const cache = new SnapshotCache<string>(10);
  assert.equal(await cache.get("tags=a", "s", counted("a")), "a");
  assert.equal(await cache.get("tags=b", "s", counted("b")), "b");
  assert.equal(await cache.get("tags=a", "s", counted("not loaded")), "a");
});

Deno.test("SnapshotCache: concurrent lookups share one load", async () => {
  const cache = new SnapshotCache<number>(10);
  let calls = 0;
  let release!: (v: number) => void;
  const load = () => {
    calls++;
    return new Promise<number>((r) => (release = r));
  };
  const all = Promise.all(Array.from({ length: 8 }, () => cache.get("k", "s", load)));
  release(42);
  assert.deepEqual(await all, Array(8).fill(42));
  assert.equal(calls, 1);
});

Deno.test("SnapshotCache: a failed load is not kept", async () => {
  const cache = new SnapshotCache<string>(10);
  await assert.rejects(cache.get("k", "s", () => Promise.reject(new Error("connection lost"))));
  await Promise.resolve(); // let the cache see the rejection
  assert.equal(cache.size, 0);
  assert.equal(await cache.get("k", "s", counted("loaded again")), "loaded again");
});

Deno.test("SnapshotCache: the least recently used entry goes first", async () => {
  const cache = new SnapshotCache<string>(2);
  await cache.get("a", "s", counted("a"));
  await cache.get("b", "s", counted("b"));
  await cache.get("a", "s", counted("not loaded")); // a is now the most recently used
  await cache.get("c", "s", counted("c")); // evicts b
  assert.equal(cache.size, 2);
  const a = counted("a again");
  const b = counted("b again");
  assert.equal(await cache.get("a", "s", a), "a");
  assert.equal(await cache.get("b", "s", b), "b again");
  assert.equal(a.calls + b.calls, 1);
});

Deno.test("SnapshotCache: 0 entries keeps nothing", async () => {
  const cache = new SnapshotCache<string>(0);
  const load = counted("x");
  await cache.get("k", "s", load);
  await cache.get("k", "s", load);
  assert.equal(load.calls, 2);
  assert.equal(cache.size, 0);
});
