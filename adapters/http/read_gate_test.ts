import assert from "node:assert/strict";
import { AppError } from "../../domain/errors.ts";
import { ReadGate } from "./read_gate.ts";

const limits = { max: 2, perAddress: 1, waitMs: 50, queue: 1 };

async function refusal(p: Promise<unknown>): Promise<string> {
  const e = await p.then(() => null, (e) => e);
  assert.ok(e instanceof AppError, `refused, not ${e}`);
  return e.code;
}

Deno.test("ReadGate refuses an address over its share at once, and others still get in", async () => {
  const gate = new ReadGate(limits);
  const a = await gate.enter("198.51.100.1");
  assert.equal(await refusal(gate.enter("198.51.100.1")), "too_many_reads");
  const b = await gate.enter("198.51.100.2");
  assert.deepEqual(gate.stats, { held: 2, waiting: 0, addresses: 2 });
  a[Symbol.dispose]();
  b[Symbol.dispose]();
  assert.deepEqual(gate.stats, { held: 0, waiting: 0, addresses: 0 }, "nothing kept");
});

Deno.test("ReadGate: a read that finds every slot taken waits its turn, then is refused", async () => {
  const gate = new ReadGate(limits);
  const held = [await gate.enter("a"), await gate.enter("b")];
  // Handed on: a slot released while it waits is its own.
  const waiting = gate.enter("c");
  assert.equal(gate.stats.waiting, 1);
  assert.equal(await refusal(gate.enter("d")), "reads_busy", "the queue is full");
  held[0][Symbol.dispose]();
  const c = await waiting;
  assert.deepEqual(gate.stats, { held: 2, waiting: 0, addresses: 2 });
  // Not handed on within waitMs: refused, and its address no longer counted.
  assert.equal(await refusal(gate.enter("e")), "reads_busy");
  assert.deepEqual(gate.stats, { held: 2, waiting: 0, addresses: 2 });
  c[Symbol.dispose]();
  held[1][Symbol.dispose]();
  held[1][Symbol.dispose](); // twice is once
  assert.deepEqual(gate.stats, { held: 0, waiting: 0, addresses: 0 });
});
