import assert from "node:assert/strict";
import { BUDGET_MS, yieldIfBusy } from "./event_loop.ts";

/** Holds the thread for `ms`, as parsing and hashing a chunk does. */
function busy(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* working */ }
}

Deno.test("yieldIfBusy() lets a timer run inside a long chain of steps that never wait", async () => {
  let fired = 0;
  const timer = setInterval(() => fired++, 0);
  try {
    // 40 budgets of work, in steps whose awaits resolve at once (a buffered body's reads).
    for (let step = 0; step < 80 * BUDGET_MS; step++) {
      busy(0.5);
      await Promise.resolve();
      await yieldIfBusy();
    }
  } finally {
    clearInterval(timer);
  }
  // Without the yields the interval could not fire until the chain had ended.
  assert.ok(fired >= 5, `the timer ran ${fired} times during the chain`);
});
