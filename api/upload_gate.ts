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
