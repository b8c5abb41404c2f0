import assert from "node:assert/strict";
import { setPriority } from "node:os";
import { OpenAPIHono } from "@hono/zod-openapi";
import {
  BUDGET_MS,
  EVENT_LOOP_NICE,
  handlingRequest,
  HOLD_MS,
  raiseEventLoopPriority,
  requestsBeingHandled,
  yieldIfBusy,
} from "./event_loop.ts";
import { createShell } from "../wiring/app_shell.ts";
import { captureLogger } from "./log.ts";
import type { AppEnv } from "../api/env.ts";
import { mayLowerNice, threadNices } from "../tests/_harness/threads.ts";

/** Holds the thread for `ms`, as parsing and hashing a chunk does. */
function busy(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until) { /* working */ }
}

Deno.test("yieldIfBusy() lets a timer run inside a long chain of steps that never wait", async () => {
  let fired = 0;
  const timer = setInterval(() => fired++, 0);
  try {
    // 40 holds of work, in steps whose awaits resolve at once (a buffered body's reads).
    for (let step = 0; step < 80 * HOLD_MS; step++) {
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

/** Whether a step that held the loop for `ms` right after it turned is asked to pause. */
async function pausesAfterHolding(ms: number): Promise<boolean> {
  await new Promise((r) => setTimeout(r, 5)); // the loop turns; a marker set before has fired
  await yieldIfBusy(); // sets the marker for the next turn
  busy(ms);
  const wait = yieldIfBusy();
  await wait;
  return wait !== undefined;
}

Deno.test("with other requests being handled, steps pause after BUDGET_MS; alone, after HOLD_MS", async () => {
  // Alone, a step that waited for I/O has let the loop turn, so only a loop really held for
  // HOLD_MS (its timer overdue) is worth a pause, which idles the upload for 1-2 ms; beside other
  // requests, steps pause every BUDGET_MS to leave the loop room for them.
  const between = BUDGET_MS + 0.25;
  // Alone, such a step is not paused, unless this process lost its core for a while in between
  // (tests run side by side; then the loop was really held): so counted, not every time. Tries
  // go on until three were not paused, at most 20; one suffices, and pausing every step fails.
  const alone = [];
  while (alone.length < 20 && alone.filter((p) => !p).length < 3) {
    alone.push(await pausesAfterHolding(between));
  }
  assert.ok(alone.some((p) => !p), `alone, every step paused: ${alone}`);
  assert.ok(await pausesAfterHolding(HOLD_MS + 0.5), "alone, held past HOLD_MS");
  {
    using _a = handlingRequest();
    using _b = handlingRequest();
    for (let i = 0; i < 5; i++) assert.ok(await pausesAfterHolding(between), `shared, try ${i}`);
  }
  assert.equal(requestsBeingHandled(), 0);
});

Deno.test("every request through the app shell counts as being handled until it is answered", async () => {
  const api = new OpenAPIHono<AppEnv>();
  const seen: number[] = [];
  api.get("/count", async (c) => {
    await new Promise((r) => setTimeout(r, 20));
    seen.push(requestsBeingHandled());
    return c.json({});
  });
  const app = createShell({ log: captureLogger().log }, { api });
  const answers = await Promise.all([1, 2, 3].map(() => app.request("/api/v1/count")));
  assert.deepEqual(answers.map((r) => r.status), [200, 200, 200]);
  assert.deepEqual(seen, [3, 2, 1]);
  assert.equal(requestsBeingHandled(), 0);
  assert.equal((await app.request("/api/v1/nothing-here")).status, 404);
  assert.equal(requestsBeingHandled(), 0);
});

Deno.test("raiseEventLoopPriority() raises the calling thread where allowed, and no other", () => {
  // The thread running this test (`deno test` may run a file on a thread of its own).
  const tid = Number(Deno.readLinkSync("/proc/thread-self").split("/").at(-1));
  const before = threadNices(Deno.pid);
  const own = before.find((t) => t.tid === tid)!.nice;
  try {
    const nice = raiseEventLoopPriority();
    const after = new Map(threadNices(Deno.pid).map((t) => [t.tid, t.nice]));
    assert.equal(after.get(tid), nice);
    // Where the kernel allows it (root in CI: CAP_SYS_NICE) the thread gets EVENT_LOOP_NICE;
    // elsewhere it keeps its value and nothing throws (the next test makes that case as root).
    assert.equal(nice, mayLowerNice("self", EVENT_LOOP_NICE) ? EVENT_LOOP_NICE : own);
    for (const t of before.filter((t) => t.tid !== tid && after.has(t.tid))) {
      assert.equal(after.get(t.tid), t.nice, `thread ${t.name}`);
    }
  } finally {
    setPriority(0, own);
  }
});

Deno.test("raiseEventLoopPriority() keeps normal priority, without throwing, where not allowed", async () => {
  // What the Docker image's unprivileged user meets without `--ulimit nice=30`: no CAP_SYS_NICE
  // and an RLIMIT_NICE of 0. Where this process has either (root in CI), the child runs without
  // them (prlimit, and setpriv dropping the capability); any other user has neither already.
  const script = `import { getPriority } from "node:os";
    import { raiseEventLoopPriority } from ${
    JSON.stringify(import.meta.resolve("./event_loop.ts"))
  };
    const before = getPriority(0);
    console.log(JSON.stringify({ before, after: raiseEventLoopPriority(), now: getPriority(0) }));`;
  const deno = [Deno.execPath(), "eval", "--no-config", script];
  const args = mayLowerNice("self", EVENT_LOOP_NICE)
    ? ["prlimit", "--nice=0:0", "--", "setpriv", "--bounding-set=-sys_nice", "--", ...deno]
    : deno;
  const out = await new Deno.Command(args[0], { args: args.slice(1), stderr: "inherit" }).output();
  assert.ok(out.success);
  const { before, after, now } = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.equal(after, before);
  assert.equal(now, before);
  assert.ok(before > EVENT_LOOP_NICE);
});
