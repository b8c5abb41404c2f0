/**
 * At most `max` holders at once; the others wait for a slot in arrival order, each at most
 * `waitMs`, and then go ahead anyway. For work that is not what limits a rate but fills the event
 * loop's turns when too much of it runs at once (upload bodies read, originals written to
 * storage): a turn then serves a piece of every one of them, and a request for anything else
 * waits behind several such turns. The wait is bounded so that a holder that never finishes (a
 * client that sends slowly, a storage call still within its deadline) delays the others by
 * `waitMs`, never blocks them.
 */
export class Slots {
  #held = 0;
  readonly #waiting: (() => void)[] = [];
  /**
   * With `refuse`, the bound is strict: a wait past `waitMs` rejects with its error instead of
   * going ahead (FFmpeg runs, adapters/video/ffmpeg.ts, where more at once means more memory).
   */
  constructor(
    readonly max: number,
    readonly waitMs: number,
    readonly refuse?: () => Error,
  ) {}

  /**
   * A slot, now or once one is handed on (or after `waitMs`, this call's own when given); dispose
   * it to release it.
   */
  async take(waitMs = this.waitMs): Promise<Disposable> {
    if (this.#held < this.max) {
      this.#held++;
    } else {
      // Woken, the releaser's slot is handed on; timed out, this one takes one more (or, strict,
      // gives up).
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(handOn), 1);
          if (this.refuse) return reject(this.refuse());
          this.#held++;
          resolve();
        }, waitMs);
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
        else this.#held--;
      },
    };
  }

  /** Slots held now. */
  get held(): number {
    return this.#held;
  }
}
