/**
 * A watch on this process's event loop: the longest gap between two ticks of a 1 ms timer, and
 * the most CPU time its thread ran between two ticks. Used by bench/serve.ts (B3) and by tests
 * that hold the loop's stalls under a bound.
 *
 * @module
 */

/** The event loop's longest stretches while a watch ran (ms). */
export interface LoopGaps {
  /** The longest wall-clock gap between two ticks of a 1 ms timer. */
  gap: number;
  /**
   * The most CPU time the loop's thread spent between two ticks: how long the loop was really
   * held, whatever the machine's load (a busy machine also makes the thread wait for a core,
   * which only `gap` counts).
   */
  ran: number;
  /** Gaps over 5 ms, and over 20 ms. */
  over5: number;
  over20: number;
}

/**
 * This thread's time on a CPU so far (ms, ns resolution), from the Linux scheduler: the thread of
 * the event loop that calls it, which is not always the process's first (`deno test --parallel`
 * runs each test file on a thread of its own).
 */
function loopThreadRanMs(): number {
  const schedstat = Deno.readTextFileSync("/proc/thread-self/schedstat");
  return Number(schedstat.split(" ")[0]) / 1e6;
}

/**
 * Watches this process's event loop with a 1 ms timer until `stop()`. A stall seen by a load
 * generator would be its own, not the service's.
 */
export function watchEventLoop(): { stop(): LoopGaps } {
  const worst: LoopGaps = { gap: 0, ran: 0, over5: 0, over20: 0 };
  let last = performance.now();
  let lastRan = loopThreadRanMs();
  const tick = () => {
    const now = performance.now();
    const ran = loopThreadRanMs();
    const gap = now - last;
    worst.gap = Math.max(worst.gap, gap);
    if (gap > 5) worst.over5++;
    if (gap > 20) worst.over20++;
    worst.ran = Math.max(worst.ran, ran - lastRan);
    last = now;
    lastRan = ran;
  };
  const timer = setInterval(tick, 1);
  return {
    stop: () => {
      clearInterval(timer);
      // A loop blocked until now never ran the timer: count that stretch too.
      tick();
      return { ...worst };
    },
  };
}
