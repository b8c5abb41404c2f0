/** Admission control for uploads: at most N bodies in flight, the rest get 503 at once. */
import { AppError } from "../domain/errors.ts";

/** A counting gate whose slots are released by `using`. */
export class UploadGate {
  #inFlight = 0;
  constructor(readonly max: number) {}

  /** Takes a slot or throws `busy` (503); release it by disposing the result. */
  enter(): Disposable {
    if (this.#inFlight >= this.max) {
      throw new AppError("busy", "Too many uploads in progress; try again shortly");
    }
    this.#inFlight++;
    let released = false;
    return {
      [Symbol.dispose]: () => {
        if (!released) this.#inFlight--;
        released = true;
      },
    };
  }
}

/** Upload bodies read at once (a `Slots`, domain/slots.ts). */
export const READ_SLOTS = 3;

/**
 * The longest an upload waits for a read slot before it reads anyway. Reading is not what limits
 * the upload rate (thumbnails are), but with 20 bodies arriving together each event-loop turn
 * served a read of every one of them: reading 3 at a time lowers B3's health p99 under the burst
 * and the burst takes as long (figures in bench/RESULTS.md#notes-moved-from-code-comments). A
 * client that sends its body slowly delays the others by this much, never blocks them.
 */
export const READ_SLOT_WAIT_MS = 1000;
