/**
 * Cooperative yielding for long streams of small steps. A read of a request body that is
 * already buffered, or a write the socket takes at once, completes without the event loop
 * turning, so a loop of them runs as one stretch: twenty 5.3 MB uploads read and hashed chunk
 * by chunk held the loop for 407 ms in one go (B3's main-thread CPU between two timer ticks).
 * `yieldIfBusy()` lets timers and I/O (a health probe) run once the current stretch, shared by
 * every caller, has lasted BUDGET_MS. And the event loop's thread's CPU priority.
 */
import { getPriority, setPriority } from "node:os";

/** The longest stretch callers run before they let the event loop turn. */
export const BUDGET_MS = 2;

let turnStarted = performance.now();
let marking = false;

/** Notes when the loop next runs timers: the start of a new stretch for every caller. */
function markNextTurn() {
  if (marking) return;
  marking = true;
  setTimeout(() => {
    marking = false;
    turnStarted = performance.now();
  }, 0);
}

/** Resolves at once, or after the event loop has turned if this stretch is over budget. */
export function yieldIfBusy(): Promise<void> | undefined {
  markNextTurn();
  if (performance.now() - turnStarted < BUDGET_MS) return undefined;
  // The marker's timer was set first, so it fires first and starts the next stretch; callers
  // resumed after it check the budget again.
  return new Promise<void>((r) => setTimeout(r, 0)).then(() => yieldIfBusy());
}

/**
 * The nice value the event loop's thread asks for (Linux; where allowed: root, CAP_SYS_NICE, or an
 * RLIMIT_NICE of at least 20 - EVENT_LOOP_NICE, which `docker run --ulimit nice=30` gives the
 * image's unprivileged user).
 * Every request passes through that one thread, and under a burst of uploads it waited for a core
 * behind other processes' work at the same priority (s3rver's, PostgreSQL's, the uploading
 * clients'), though it held the loop for at most 6 ms at a time: B3's health probes, p99 11-44 ms
 * at nice 0, 7.5-26 at -10, 9-30 at -5 (bench/RESULTS.md). It uses a quarter to half of one core
 * there, so the rest of the machine keeps the rest.
 */
export const EVENT_LOOP_NICE = -10;

/**
 * Raises the calling thread's priority to EVENT_LOOP_NICE where the system allows it, and returns
 * the nice value it runs at. On Linux a nice value belongs to a thread and is inherited by the
 * threads and processes it starts later: call it from the event loop's thread once everything that
 * should keep its own priority (the database, the workers) has been started.
 */
export function raiseEventLoopPriority(): number {
  try {
    if (getPriority(0) > EVENT_LOOP_NICE) setPriority(0, EVENT_LOOP_NICE);
  } catch {
    // Not allowed (an unprivileged user without a raised RLIMIT_NICE): normal priority.
  }
  try {
    return getPriority(0);
  } catch {
    return 0;
  }
}
