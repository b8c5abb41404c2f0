import assert from "node:assert/strict";
import { Slots } from "./slots.ts";

Deno.test("Slots lets max holders at once, hands a released slot to the longest waiter", async () => {
  const slots = new Slots(2, 10_000);
  const first = await slots.take();
  const second = await slots.take();
  const order: string[] = [];
  const third = slots.take().then((s) => (order.push("third"), s));
  const fourth = slots.take().then((s) => (order.push("fourth"), s));
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(order, [], "both wait while two slots are held");
  first[Symbol.dispose]();
  first[Symbol.dispose](); // a second release hands on nothing more
  const t = await third;
  await new Promise((r) => setTimeout(r, 20));
  assert.deepEqual(order, ["third"]);
  assert.equal(slots.held, 2);
  second[Symbol.dispose]();
  const f = await fourth;
  assert.deepEqual(order, ["third", "fourth"]);
  t[Symbol.dispose]();
  f[Symbol.dispose]();
  assert.equal(slots.held, 0);
  using _again = await slots.take();
  assert.equal(slots.held, 1);
});

Deno.test("Slots: a waiter goes ahead after waitMs, so a holder that never finishes blocks no one", async () => {
  const slots = new Slots(1, 30);
  const slow = await slots.take(); // a client that never finishes sending, say
  const started = performance.now();
  const next = await slots.take();
  assert.ok(performance.now() - started >= 25, "it waited first");
  assert.equal(slots.held, 2);
  next[Symbol.dispose]();
  slow[Symbol.dispose]();
  assert.equal(slots.held, 0, "the timed-out waiter left the queue: no slot is handed to it");
});

Deno.test("Slots with refuse: a wait past its bound rejects; the slots stay as they were", async () => {
  const slots = new Slots(1, 10_000, () => new Error("busy"));
  const held = await slots.take();
  await assert.rejects(slots.take(30), { message: "busy" });
  assert.equal(slots.held, 1, "the refused waiter took nothing");
  const waiter = slots.take(10_000);
  held[Symbol.dispose]();
  (await waiter)[Symbol.dispose]();
  assert.equal(slots.held, 0);
});
