/**
 * Cooperative yielding for long streams of small steps. A read of a request body that is already
 * buffered, or a write the socket takes at once, completes without the event loop turning, so a
 * loop of them runs as one stretch that holds the loop for a whole burst of uploads (B3's
 * main-thread CPU between two timer ticks; bench/RESULTS.md#notes-moved-from-code-comments).
 * `yieldIfBusy()` lets timers and I/O (a health probe) run in between. And the event loop's
 * thread's CPU priority.
 */
import { getPriority, setPriority } from "node:os";

/**
 * How long steps run, while other requests are being handled too (a burst of uploads), before
 * they all pause until the loop has run its timers, which leaves it free for other work between.
 */
export const BUDGET_MS = 2;

/**
 * How long the steps of the only request being handled may hold the loop. A 0 ms timer set on a
 * free loop fires within about 2 ms (Deno waits at least 1 ms and its timers tick by the
 * millisecond), so one not fired HOLD_MS after it was set means the loop has been held past its
 * due time.
 */
export const HOLD_MS = 3;

/** When the loop last ran timers, and when the timer that tells of its next turn was set. */
let turnAt = performance.now();
let markedAt = turnAt;
let marking = false;
/** Requests being handled by this process (`handlingRequest`). */
let requests = 0;

/** Counts a request as being handled until it is disposed of (wiring/app_shell.ts, for every request). */
export function handlingRequest(): Disposable {
  requests++;
  return { [Symbol.dispose]: () => void requests-- };
}

/** How many requests are being handled now. */
export const requestsBeingHandled = () => requests;

/** Sets a timer that fires when the loop next runs timers, unless one is already set. */
function markNextTurn() {
  if (marking) return;
  marking = true;
  markedAt = performance.now();
  setTimeout(() => {
    marking = false;
    turnAt = performance.now();
  }, 0);
}

/**
 * Resolves at once, or once the event loop has turned if the steps calling it should let it.
 * While other requests are being handled too, every caller pauses once BUDGET_MS have passed
 * since the loop last ran timers, and stays paused until it does again: twenty uploads at once
 * then leave room for health probes and reads (bench B3). The only request pauses only when the
 * loop has really been held for HOLD_MS: a step that waited for I/O let the loop turn already,
 * and a pause then only idles the upload (a 0 ms timer takes a millisecond or two). Pausing by
 * HOLD_MS alone keeps a lone upload close to never pausing; pausing by it in a burst too raised
 * B3's health p99 (figures in bench/RESULTS.md#notes-moved-from-code-comments).
 */
export function yieldIfBusy(): Promise<void> | undefined {
  markNextTurn();
  const now = performance.now();
  if (requests > 1 ? now - turnAt < BUDGET_MS : now - markedAt < HOLD_MS) return undefined;
  // The marker's timer was set first, so it fires first and starts the next turn; callers
  // resumed after it check again.
  return new Promise<void>((r) => setTimeout(r, 0)).then(() => yieldIfBusy());
}

/**
 * The nice value the event loop's thread asks for (Linux; where allowed: root, CAP_SYS_NICE, or an
 * RLIMIT_NICE of at least 20 - EVENT_LOOP_NICE, which `docker run --ulimit nice=30` gives the
 * image's unprivileged user).
 * Every request passes through that one thread, and under a burst of uploads it waited for a core
 * behind other processes' work at the same priority (s3rver's, PostgreSQL's, the uploading
 * clients'), though it held the loop for a few milliseconds at a time; at -10 B3's health p99 is
 * lowest (figures in bench/RESULTS.md#notes-moved-from-code-comments). It uses a quarter to half of
 * one core there, so the rest of the machine keeps the rest.
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
