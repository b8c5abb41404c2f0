import assert from "node:assert/strict";
import { setPriority } from "node:os";
import { BUDGET_MS, EVENT_LOOP_NICE, raiseEventLoopPriority, yieldIfBusy } from "./event_loop.ts";
import { threadNices } from "../tests/_harness/threads.ts";

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

Deno.test("raiseEventLoopPriority() raises the calling thread where allowed, and no other", () => {
  // The thread running this test (`deno test` may run a file on a thread of its own).
  const tid = Number(Deno.readLinkSync("/proc/thread-self").split("/").at(-1));
  const before = threadNices(Deno.pid);
  const own = before.find((t) => t.tid === tid)!.nice;
  try {
    const nice = raiseEventLoopPriority();
    const after = new Map(threadNices(Deno.pid).map((t) => [t.tid, t.nice]));
    assert.equal(after.get(tid), nice);
    // As root (CI) the kernel allows it; elsewhere the thread keeps its value and nothing throws.
    assert.equal(nice, Deno.uid() === 0 ? EVENT_LOOP_NICE : own);
    for (const t of before.filter((t) => t.tid !== tid && after.has(t.tid))) {
      assert.equal(after.get(t.tid), t.nice, `thread ${t.name}`);
    }
  } finally {
    setPriority(0, own);
  }
});

Deno.test("raiseEventLoopPriority() keeps normal priority, without throwing, where not allowed", async () => {
  // What the Docker image's unprivileged user meets without `--ulimit nice=30`: no CAP_SYS_NICE
  // and an RLIMIT_NICE of 0. As root (CI) the capability is dropped for a child with setpriv;
  // any other user has neither already.
  const script = `import { getPriority } from "node:os";
    import { raiseEventLoopPriority } from ${
    JSON.stringify(import.meta.resolve("./event_loop.ts"))
  };
    const before = getPriority(0);
    console.log(JSON.stringify({ before, after: raiseEventLoopPriority(), now: getPriority(0) }));`;
  const deno = [Deno.execPath(), "eval", "--no-config", script];
  const args = Deno.uid() === 0
    ? ["prlimit", "--nice=0:0", "--", "setpriv", "--bounding-set=-sys_nice", "--", ...deno]
    : deno;
  const out = await new Deno.Command(args[0], { args: args.slice(1), stderr: "inherit" }).output();
  assert.ok(out.success);
  const { before, after, now } = JSON.parse(new TextDecoder().decode(out.stdout));
  assert.equal(after, before);
  assert.equal(now, before);
  assert.ok(before > EVENT_LOOP_NICE);
});
