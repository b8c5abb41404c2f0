import { deepEqual, equal } from "node:assert/strict";
import { ByteCache } from "./byte_cache.ts";

const bytes = (n: number, fill = 1) => new Uint8Array(n).fill(fill);

Deno.test("ByteCache returns what it holds and drops the least recently used to fit", () => {
  const cache = new ByteCache(100, 60);
  cache.set("a", bytes(40, 1));
  cache.set("b", bytes(40, 2));
  deepEqual(cache.get("a"), bytes(40, 1)); // a is now the most recent
  cache.set("c", bytes(40, 3)); // 120 > 100: b goes, not a
  equal(cache.get("b"), undefined);
  deepEqual(cache.get("a"), bytes(40, 1));
  deepEqual(cache.get("c"), bytes(40, 3));
  equal(cache.bytes, 80);
});

Deno.test("ByteCache never holds an object over its per-object limit, nor anything when disabled", () => {
  const cache = new ByteCache(100, 60);
  cache.set("big", bytes(61));
  equal(cache.get("big"), undefined);
  equal(cache.bytes, 0);
  const off = new ByteCache(0, 60);
  equal(off.accepts(1), false);
  off.set("a", bytes(1));
  equal(off.get("a"), undefined);
});

Deno.test("ByteCache replaces and deletes with the byte count kept exact", () => {
  const cache = new ByteCache(100, 60);
  cache.set("a", bytes(30));
  cache.set("a", bytes(50));
  equal(cache.bytes, 50);
  cache.delete("a");
  cache.delete("missing");
  equal(cache.bytes, 0);
  equal(cache.get("a"), undefined);
});
