/**
 * The deadline of one storage request: it fails when the server makes no progress for a set
 * time, however long a request that keeps progressing takes (a 100 MB body that keeps flowing is
 * never cut). The clock runs only while the request waits on the server: while a body's reader
 * is not asking for more (a slow client downstream), or a streamed request body waits for its
 * source, it stands still.
 */
import { StorageError } from "./object_store.ts";

/** A storage request made no progress within its deadline (S3Store reports it as StorageError). */
export class StorageTimeoutError extends Error {
  override name = "StorageTimeoutError";
}

/** Watches one request; `signal` aborts it once it has waited too long without progress. */
export class ProgressDeadline {
  readonly signal: AbortSignal;
  readonly #ctl = new AbortController();
  readonly #ms: number;
  #due = 0;
  #waiting = false;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #timerAt = 0;

  /** `ms` without progress fails the request; `outer` (a caller's signal) aborts it too. */
  constructor(ms: number, outer?: AbortSignal) {
    this.#ms = ms;
    this.signal = outer ? AbortSignal.any([outer, this.#ctl.signal]) : this.#ctl.signal;
  }

  /** True once the deadline (not the caller's signal) aborted the request. */
  get expired(): boolean {
    return this.#ctl.signal.aborted;
  }

  /** Progress, or a new wait on the server: the next `ms` (plus `extraMs`) are allowed. */
  wait(extraMs = 0) {
    this.#waiting = true;
    this.#due = performance.now() + this.#ms + extraMs;
    // Per chunk this is all: a timer set earlier fires, sees the later due time and waits on.
    if (this.#timer === undefined || this.#timerAt > this.#due) this.#arm();
  }

  /** Not waiting on the server now: the clock stands still until the next `wait`. */
  idle() {
    this.#waiting = false;
  }

  /** The request is over. */
  end() {
    this.#waiting = false;
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  #arm() {
    clearTimeout(this.#timer);
    this.#timerAt = this.#due;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.#waiting) return;
      if (performance.now() < this.#due) return this.#arm();
      this.#ctl.abort(new StorageTimeoutError(`no progress for ${this.#ms / 1000} s`));
    }, Math.max(0, this.#due - performance.now()));
  }

  /**
   * A response body read under this deadline: each read must bring a chunk in time. A failed
   * read becomes a StorageError; the deadline ends with the body.
   */
  watchResponse(body: ReadableStream<Uint8Array>, what: string): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    const failure = (e: unknown) =>
      e instanceof StorageError
        ? e
        : new StorageError(`S3 ${what} failed while reading: ${(e as Error)?.message ?? e}`, {
          cause: e,
        });
    let open = true;
    return new ReadableStream<Uint8Array>({
      start: (ctl) => {
        // The fetch's abort is meant to fail a pending read, but on a loaded machine a read
        // waiting on a silent server was seen to outlive it (Deno 2.9.6): fail this stream too.
        this.signal.addEventListener("abort", () => {
          if (!open) return;
          open = false;
          ctl.error(failure(this.signal.reason));
          reader.cancel(this.signal.reason).catch(() => {});
        }, { once: true });
      },
      pull: async (ctl) => {
        this.wait();
        let chunk: ReadableStreamReadResult<Uint8Array>;
        try {
          chunk = await reader.read();
        } catch (e) {
          this.end();
          if (!open) return;
          open = false;
          throw failure(e);
        } finally {
          this.idle();
        }
        if (!open) return;
        if (chunk.done) {
          open = false;
          this.end();
          ctl.close();
        } else ctl.enqueue(chunk.value);
      },
      cancel: async (reason) => {
        open = false;
        this.end();
        await reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
  }

  /**
   * A request body sent under this deadline: each chunk fetch takes is progress; the time spent
   * waiting for the source is not counted.
   */
  watchRequest(body: ReadableStream<Uint8Array>): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    return new ReadableStream<Uint8Array>({
      pull: async (ctl) => {
        this.idle();
        const chunk = await reader.read();
        this.wait();
        if (chunk.done) ctl.close();
        else ctl.enqueue(chunk.value);
      },
      cancel: (reason) => reader.cancel(reason),
    }, { highWaterMark: 0 });
  }
}
