import assert from "node:assert/strict";
import { HttpError } from "./errors.ts";
import { ReadSlots, UploadGate } from "./upload_gate.ts";

Deno.test("UploadGate admits max uploads at once, refuses the next with 503 and Retry-After", () => {
  const gate = new UploadGate(2);
  const first = gate.enter();
  const second = gate.enter();
  assert.throws(() => gate.enter(), (err: unknown) => {
    assert.ok(err instanceof HttpError);
    assert.equal(err.status, 503);
    assert.equal(new Headers(err.options.headers).get("Retry-After"), "2");
    return true;
  });
  first[Symbol.dispose]();
  first[Symbol.dispose](); // a second release frees nothing more
  using _third = gate.enter();
  assert.throws(() => gate.enter(), HttpError);
  second[Symbol.dispose]();
  using _fourth = gate.enter();
});

Deno.test("ReadSlots lets max bodies read at once, hands a released slot to the longest waiter", async () => {
  const slots = new ReadSlots(2, 10_000);
  const first = await slots.take();
  const second = await slots.take();
  const order: string[] = [];
  const third = slots.take().then((s) => (order.push("third"), s));
  const fourth = slots.take().then((s) => (order.push("fourth"), s));
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(order, [], "both wait while two bodies are read");
  first[Symbol.dispose]();
  first[Symbol.dispose](); // a second release hands on nothing more
  const t = await third;
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(order, ["third"]);
  assert.equal(slots.reading, 2);
  second[Symbol.dispose]();
  const f = await fourth;
  assert.deepEqual(order, ["third", "fourth"]);
  t[Symbol.dispose]();
  f[Symbol.dispose]();
  assert.equal(slots.reading, 0);
  using _again = await slots.take();
  assert.equal(slots.reading, 1);
});

Deno.test("ReadSlots: a waiter reads anyway after waitMs, so a slow body never blocks the rest", async () => {
  const slots = new ReadSlots(1, 30);
  const slow = await slots.take(); // a client that never finishes sending
  const started = performance.now();
  const next = await slots.take();
  assert.ok(performance.now() - started >= 25, "it waited first");
  assert.equal(slots.reading, 2);
  next[Symbol.dispose]();
  slow[Symbol.dispose]();
  assert.equal(slots.reading, 0, "the timed-out waiter left the queue: no slot is handed to it");
});
