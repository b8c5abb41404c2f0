/**
 * A fixed pool of thumbnail workers: caps concurrency, bounds the queue, times jobs out and
 * replaces dead or stuck workers, so the server's event loop never waits on pixel work.
 *
 * @module
 */

import type { ThumbnailOptions, ThumbResult } from "./make_thumbnail.ts";
import { TEST_HOOKS_NAME_SUFFIX, type WorkerRequest, type WorkerResponse } from "./messages.ts";

export type { ThumbResult } from "./make_thumbnail.ts";

/** How the pool is sized and limited. */
export interface ThumbnailPoolOptions {
  /** Number of workers, each running one job at a time. */
  size: number;
  /** Longest a job may run in a worker before the worker is killed (ms); default 15000. */
  timeoutMs?: number;
  /** Most jobs that may wait for a worker; beyond that `thumbnail()` fails at once. Default 64. */
  maxQueue?: number;
  /** Inputs claiming more pixels are refused before decoding. */
  maxPixels: number;
  /** Longest side of a thumbnail; default 400. */
  maxSide?: number;
  /** TEST ONLY: let magic inputs crash or hang a worker (see `messages.ts`). */
  testHooks?: boolean;
}

/** The queue is full: answer 503 with Retry-After rather than wait. */
export class ThumbnailQueueFullError extends Error {
  override name = "ThumbnailQueueFullError";
}

/** A job ran past the timeout; its worker was killed and replaced. */
export class ThumbnailTimeoutError extends Error {
  override name = "ThumbnailTimeoutError";
}

/** The worker died under the job (or the pool closed); the image may or may not be at fault. */
export class ThumbnailWorkerError extends Error {
  override name = "ThumbnailWorkerError";
}

/** The image could not be thumbnailed (corrupt, unsupported or too large); the message says why. */
export class ThumbnailFailedError extends Error {
  override name = "ThumbnailFailedError";
}

/** A snapshot for health checks and metrics. */
export interface ThumbnailPoolStats {
  workers: number;
  busy: number;
  queued: number;
}

interface Job {
  id: number;
  input: Uint8Array;
  resolve: (result: ThumbResult) => void;
  reject: (error: Error) => void;
  /** What the job makes, when not the pool's WebP thumbnail. */
  options?: Pick<ThumbnailOptions, "maxSide" | "format">;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  job: Job | null;
  /** Runs out when the warmup or the current job takes longer than the timeout. */
  timer?: Timer;
  warmed: PromiseWithResolvers<void>;
  /** Where the next job's input is copied: mapped already, so the copy costs no page faults. */
  buffer?: ArrayBuffer;
}

/** Node's typings (pulled in by sharp) and Deno's disagree on what setTimeout returns. */
type Timer = ReturnType<typeof setTimeout>;

const WORKER_URL = new URL("./thumbnail_worker.ts", import.meta.url);
/** Pause before replacing a worker that failed its warmup, so a broken setup cannot spin. */
const RESPAWN_DELAY_MS = 1000;
/** Loading sharp can take a while on a cold, busy machine; this is only for a stuck start. */
const WARMUP_TIMEOUT_MS = 30_000;

/** Runs thumbnails on `size` warmed workers; see `start()`. */
export class ThumbnailPool {
  #slots: Slot[] = [];
  #queue: Job[] = [];
  #nextId = 1;
  #closed = false;
  #respawns = new Set<Timer>();
  #timeoutMs: number;
  #maxQueue: number;

  private constructor(readonly options: ThumbnailPoolOptions) {
    this.#timeoutMs = options.timeoutMs ?? 15_000;
    this.#maxQueue = options.maxQueue ?? 64;
  }

  /** Start and warm `size` workers; rejects (leaving nothing running) if any fails to warm. */
  static async start(options: ThumbnailPoolOptions): Promise<ThumbnailPool> {
    if (!(options.size >= 1)) throw new RangeError("A thumbnail pool needs at least one worker");
    const pool = new ThumbnailPool(options);
    for (let i = 0; i < options.size; i++) pool.#slots.push(pool.#spawn());
    try {
      await Promise.all(pool.#slots.map((slot) => slot.warmed.promise));
    } catch (error) {
      pool.close();
      throw error;
    }
    return pool;
  }

  /** A JPEG of `input` at most `maxSide` pixels on its longest side (services/renditions.ts). */
  jpeg(input: Uint8Array, maxSide: number, signal?: AbortSignal): Promise<ThumbResult> {
    return this.thumbnail(input, signal, { maxSide, format: "jpeg" });
  }

  /**
   * Thumbnail `input` (copied; the caller keeps its bytes); rejects at once if the queue is full.
   * Aborting `signal` drops the job if it is still queued (a running job finishes unheeded).
   */
  thumbnail(
    input: Uint8Array,
    signal?: AbortSignal,
    options?: Pick<ThumbnailOptions, "maxSide" | "format">,
  ): Promise<ThumbResult> {
    if (this.#closed) return Promise.reject(new ThumbnailWorkerError("Thumbnail pool is closed"));
    const idle = this.#slots.some((slot) => slot.ready && !slot.job);
    if (!idle && this.#queue.length >= this.#maxQueue) {
      return Promise.reject(new ThumbnailQueueFullError("Too many thumbnails in progress"));
    }
    const { promise, resolve, reject } = Promise.withResolvers<ThumbResult>();
    const job: Job = { id: this.#nextId++, input, resolve, reject, options };
    this.#queue.push(job);
    signal?.addEventListener("abort", () => {
      const at = this.#queue.indexOf(job);
      if (at < 0) return;
      this.#queue.splice(at, 1);
      reject(signal.reason);
    }, { once: true });
    this.#pump();
    return promise;
  }

  /** How many workers exist, how many are running a job and how many jobs wait. */
  stats(): ThumbnailPoolStats {
    const busy = this.#slots.filter((slot) => slot.job).length;
    return { workers: this.#slots.length, busy, queued: this.#queue.length };
  }

  /** Terminate every worker and reject every queued or running job. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    for (const timer of this.#respawns) clearTimeout(timer);
    this.#respawns.clear();
    const closed = () => new ThumbnailWorkerError("Thumbnail pool is closed");
    for (const job of this.#queue.splice(0)) job.reject(closed());
    for (const slot of this.#slots.splice(0)) this.#kill(slot, closed());
  }

  /** Same as `close()`, for `using pool = await ThumbnailPool.start(...)`. */
  [Symbol.dispose](): void {
    this.close();
  }

  #spawn(): Slot {
    const testHooks = this.options.testHooks ? TEST_HOOKS_NAME_SUFFIX : "";
    const worker = new Worker(WORKER_URL, { type: "module", name: `thumbnail${testHooks}` });
    const slot: Slot = { worker, ready: false, job: null, warmed: Promise.withResolvers() };
    // Replacements are awaited by nobody; their failure is handled in #replace.
    slot.warmed.promise.catch(() => {});
    worker.onmessage = (event: MessageEvent<WorkerResponse>) => this.#onMessage(slot, event.data);
    worker.onerror = (event) => {
      // Without this an uncaught error in a worker takes the whole server down.
      event.preventDefault();
      this.#replace(slot, new ThumbnailWorkerError(`Thumbnail worker crashed: ${event.message}`));
    };
    worker.onmessageerror = () => {
      this.#replace(slot, new ThumbnailWorkerError("Thumbnail worker sent an unreadable message"));
    };
    slot.timer = setTimeout(() => {
      this.#replace(slot, new ThumbnailWorkerError("Thumbnail worker did not warm up in time"));
    }, Math.max(WARMUP_TIMEOUT_MS, this.#timeoutMs));
    this.#post(slot, { type: "warmup" });
    return slot;
  }

  #post(slot: Slot, message: WorkerRequest, transfer: Transferable[] = []): void {
    slot.worker.postMessage(message, transfer);
  }

  #onMessage(slot: Slot, message: WorkerResponse): void {
    if (!this.#slots.includes(slot)) return;
    slot.buffer = message.buffer;
    if (message.type === "ready") {
      clearTimeout(slot.timer);
      slot.ready = true;
      slot.warmed.resolve();
    } else {
      const job = slot.job;
      if (!job || job.id !== message.id) return;
      clearTimeout(slot.timer);
      slot.job = null;
      if (message.type === "done") {
        job.resolve({
          data: message.data,
          width: message.width,
          height: message.height,
          phash: message.phash,
        });
      } else {
        job.reject(new ThumbnailFailedError(message.message));
      }
    }
    this.#pump();
  }

  /** Hand queued jobs to idle, warmed workers. */
  #pump(): void {
    for (const slot of this.#slots) {
      if (this.#queue.length === 0) return;
      if (!slot.ready || slot.job) continue;
      const job = this.#queue.shift()!;
      slot.job = job;
      slot.timer = setTimeout(() => {
        this.#replace(slot, new ThumbnailTimeoutError(`Thumbnail took over ${this.#timeoutMs} ms`));
      }, this.#timeoutMs);
      // Copy exactly the viewed bytes and move the copy, so the worker owns it and the caller's
      // bytes stay usable. The copy goes into the buffer the worker handed back with its last
      // answer: a copy into mapped memory costs no page faults on the event loop, one into a fresh
      // buffer does (bench/RESULTS.md#notes-moved-from-code-comments). A larger input gets a buffer
      // of its own, which the worker then hands back for the next job.
      const input = job.input.length <= (slot.buffer?.byteLength ?? 0)
        ? new Uint8Array(slot.buffer!, 0, job.input.length)
        : new Uint8Array(job.input.length);
      input.set(job.input);
      slot.buffer = undefined;
      const { maxPixels, maxSide } = this.options;
      const options = { maxPixels, maxSide, ...job.options };
      this.#post(slot, { type: "thumbnail", id: job.id, input, options }, [
        input.buffer,
      ]);
    }
  }

  /** Kill a crashed or stuck worker, fail its job, and start a fresh worker in its place. */
  #replace(slot: Slot, error: Error): void {
    const index = this.#slots.indexOf(slot);
    if (index < 0) return;
    this.#kill(slot, error);
    if (this.#closed) return;
    if (slot.ready) {
      this.#slots[index] = this.#spawn();
      return;
    }
    // It died while warming up: the next one likely will too, so the waiting jobs would
    // wait for nothing. Fail them now and try again after a pause.
    this.#slots.splice(index, 1);
    for (const job of this.#queue.splice(0)) job.reject(error);
    const timer = setTimeout(() => {
      this.#respawns.delete(timer);
      if (!this.#closed) this.#slots.push(this.#spawn());
    }, RESPAWN_DELAY_MS);
    this.#respawns.add(timer);
  }

  #kill(slot: Slot, error: Error): void {
    clearTimeout(slot.timer);
    slot.worker.terminate();
    slot.warmed.reject(error);
    slot.job?.reject(error);
    slot.job = null;
  }
}
