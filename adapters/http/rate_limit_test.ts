import assert from "node:assert/strict";
import { RateLimiter } from "./rate_limit.ts";

Deno.test("RateLimiter allows `limit` requests a window, then says when the next one starts", () => {
  let now = 1_000_000;
  const limiter = new RateLimiter({ limit: 3, windowMs: 60_000, now: () => now });
  for (let i = 0; i < 3; i++) assert.deepEqual(limiter.take("a"), { allowed: true });
  now += 20_500;
  assert.deepEqual(limiter.take("a"), { allowed: false, retryAfterSeconds: 40 });
  // Another address has its own budget.
  assert.deepEqual(limiter.take("b"), { allowed: true });
  now += 39_500; // the window of "a" has passed
  assert.deepEqual(limiter.take("a"), { allowed: true });
});

Deno.test("RateLimiter never holds more than maxKeys, dropping expired windows first", () => {
  let now = 0;
  const limiter = new RateLimiter({ limit: 1, windowMs: 1000, maxKeys: 3, now: () => now });
  limiter.take("a");
  limiter.take("b");
  now = 500;
  limiter.take("c");
  now = 1200; // a and b have expired, c has not
  limiter.take("d");
  assert.equal(limiter.size, 2);
  assert.deepEqual(limiter.take("c"), { allowed: false, retryAfterSeconds: 1 });
  limiter.take("e");
  limiter.take("f"); // full of live windows: the oldest (c) is forgotten
  assert.equal(limiter.size, 3);
  assert.deepEqual(limiter.take("c"), { allowed: true });
  assert.equal(limiter.size, 3);
});
