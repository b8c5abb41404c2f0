/** Admission control for uploads: at most N bodies in flight, the rest get 503 at once. */
import { HttpError } from "./errors.ts";

/** A counting gate whose slots are released by `using`. */
export class UploadGate {
  #inFlight = 0;
  constructor(readonly max: number) {}

  /** Takes a slot or throws 503; release it by disposing the result. */
  enter(): Disposable {
    if (this.#inFlight >= this.max) {
      throw new HttpError(503, {
        code: "busy",
        detail: "Too many uploads in progress; try again shortly",
      }, { headers: { "Retry-After": "2" } });
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

/** Upload bodies read at once (ReadSlots). */
export const READ_SLOTS = 3;

/** The longest an upload waits for a read slot before it reads anyway (ReadSlots). */
export const READ_SLOT_WAIT_MS = 1000;

/**
 * At most `max` upload bodies read at once; the others wait for a slot in arrival order, each at
 * most `waitMs`, and then read anyway. Reading is not what limits the upload rate (thumbnails
 * are), but every body being read fills the event loop's turns: with 20 bodies of 12 MB arriving
 * together, each turn served a read of every one of them, and a request for anything else waited
 * behind several such turns (bench B3, health p99 under the burst, 12 runs each: median 30.7 ms,
 * 19.6-55.9, reading all 20; median 23.1 ms, 14.6-49.0, reading 3 at a time; the burst took
 * 1.9-2.4 s either way). The wait is bounded so that a client that sends its body slowly can
 * delay the others by `waitMs`, never block them.
 */
export class ReadSlots {
  #reading = 0;
  readonly #waiting: (() => void)[] = [];
  constructor(readonly max: number, readonly waitMs: number) {}

  /** A slot, now or once one is handed on (or after `waitMs`); dispose it to release it. */
  async take(): Promise<Disposable> {
    if (this.#reading < this.max) {
      this.#reading++;
    } else {
      // Woken, the releaser's slot is handed on; timed out, this read takes one more.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(handOn), 1);
          this.#reading++;
          resolve();
        }, this.waitMs);
        const handOn = () => {
          clearTimeout(timer);
          resolve();
        };
        this.#waiting.push(handOn);
      });
    }
    let released = false;
    return {
      [Symbol.dispose]: () => {
        if (released) return;
        released = true;
        const next = this.#waiting.shift();
        if (next) next();
        else this.#reading--;
      },
    };
  }

  /** Bodies being read now. */
  get reading(): number {
    return this.#reading;
  }
}
