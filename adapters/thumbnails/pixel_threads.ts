/**
 * libvips' worker threads at a lower priority than the event loop. sharp's pixel work
 * (thumbnails, caption preprocessing, perceptual hashes) runs on them, and during a burst of
 * uploads they took twice the CPU of the main thread: at the same priority, a request for
 * anything else waited for a core behind them. At nice 10 they still get every core nothing else
 * wants.
 *
 * libvips starts its threads from whichever thread runs a pipeline (Deno's blocking pool, which
 * also serves file reads), so they cannot inherit a priority from one thread of ours; they are
 * found by name in /proc and lowered one by one, on a timer. Linux only; elsewhere a no-op.
 */
import { getPriority, setPriority } from "node:os";

/** The nice value of libvips' threads (recognition runs at 19, below thumbnails). */
export const PIXEL_THREADS_NICE = 10;

/** How often new threads are looked for (ms). A scan reads one directory when none is new. */
const SCAN_INTERVAL_MS = 200;

const TASKS = "/proc/self/task";

/** Lowers libvips' threads now and every SCAN_INTERVAL_MS until stopped. */
export function lowerPixelThreads(): { scan(): boolean; stop(): void } {
  let known = new Set<number>();
  /** False when there is no /proc to read (not Linux). */
  const scan = (): boolean => {
    let tids: number[];
    try {
      tids = [...Deno.readDirSync(TASKS)].map((e) => Number(e.name));
    } catch {
      return false;
    }
    const now = new Set(tids);
    for (const tid of tids) {
      if (known.has(tid)) continue;
      try {
        if (
          Deno.readTextFileSync(`${TASKS}/${tid}/comm`).trim() === "libvips worker" &&
          getPriority(tid) < PIXEL_THREADS_NICE
        ) {
          setPriority(tid, PIXEL_THREADS_NICE);
        }
      } catch {
        // Gone meanwhile, or not ours to lower (a sandbox may refuse): each thread is tried once.
      }
    }
    known = now;
    return true;
  };
  if (!scan()) return { scan, stop: () => {} };
  const timer = setInterval(scan, SCAN_INTERVAL_MS);
  Deno.unrefTimer(timer);
  return { scan, stop: () => clearInterval(timer) };
}
