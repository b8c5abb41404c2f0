/**
 * Cooperative yielding for long streams of small steps. A read of a request body that is
 * already buffered, or a write the socket takes at once, completes without the event loop
 * turning, so a loop of them runs as one stretch: twenty 5.3 MB uploads read and hashed chunk
 * by chunk held the loop for 407 ms in one go (B3's main-thread CPU between two timer ticks).
 * `yieldIfBusy()` lets timers and I/O (a health probe) run once the current stretch, shared by
 * every caller, has lasted BUDGET_MS.
 */

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
