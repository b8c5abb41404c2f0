/**
 * CaptionReader: the words printed on an image, read in the background by warm OCR engines.
 * Pixel work runs in sharp (libvips threads) and recognition in OCR processes at nice 19
 * (engine.ts), so the caller's event loop only sends pictures down a pipe and parses short TSV
 * answers, and a time limit kills the engine's process, which stops its work at once.
 *
 * @module
 */
import { type Engine, EngineCrashed, startEngine } from "./engine.ts";
import { captionBands, type Picture, type PreprocessOptions } from "./preprocess.ts";
import { readBands } from "./read_bands.ts";

/** Options of CaptionReader.start(). */
export interface CaptionReaderOptions extends PreprocessOptions {
  /** Engines (OCR processes) reading in parallel; each holds a few hundred MB. */
  workers?: number;
  /** Per image, from the start of its work (not its wait for an engine). */
  timeoutMs?: number;
  /** Words below this confidence are dropped (default CONFIDENCE_FLOOR). */
  confidenceFloor?: number;
}

/** What read() returns: the caption's words in reading order, and the time spent on them. */
export interface CaptionText {
  text: string;
  ms: number;
  /** The same words with the engine's confidence (0-100) and their band (0 top, 1 bottom). */
  words: { text: string; conf: number; band: number }[];
}

/**
 * Words below this confidence (0-100) are dropped. Caption words read well score 90-96; a band
 * of texture without a sure word is dropped whole (read_bands.ts), so the floor only trims unsure
 * words beside sure ones. 40 is the lowest floor with no false match on the 200-image corpus
 * of bench/caption_quality.ts (figures in bench/RESULTS.md#notes-moved-from-code-comments).
 */
export const CONFIDENCE_FLOOR = 40;

interface Slot {
  engine: Promise<Engine>;
  busy: boolean;
}

interface Waiter {
  resolve: (slot: Slot) => void;
  reject: (reason: unknown) => void;
}

/** Reads caption text off images with a fixed set of warm engines, one image per engine. */
export class CaptionReader {
  #slots: Slot[];
  #waiting: Waiter[] = [];
  #timeoutMs: number;
  #floor: number;
  #prep: PreprocessOptions;
  #closed = false;

  private constructor(slots: Slot[], options: CaptionReaderOptions) {
    const { timeoutMs = 30_000, confidenceFloor = CONFIDENCE_FLOOR, workers: _, ...prep } = options;
    this.#slots = slots;
    this.#timeoutMs = timeoutMs;
    this.#floor = confidenceFloor;
    this.#prep = prep;
  }

  /** Starts `workers` engines (default 1) and waits until each has read a first picture. */
  static async start(options: CaptionReaderOptions = {}): Promise<CaptionReader> {
    const engines = await Promise.allSettled(
      Array.from({ length: Math.max(1, options.workers ?? 1) }, () => startEngine()),
    );
    const failed = engines.find((e) => e.status === "rejected");
    if (failed) {
      for (const e of engines) if (e.status === "fulfilled") await e.value.terminate();
      throw new Error("Could not start the OCR engine", { cause: failed.reason });
    }
    const slots = engines.map((e) => ({
      engine: Promise.resolve((e as PromiseFulfilledResult<Engine>).value),
      busy: false,
    }));
    return new CaptionReader(slots, options);
  }

  /**
   * The caption words of `image` (JPEG, PNG, GIF, WebP, AVIF), top band first, joined by single
   * spaces; "" when none is sure enough. Rejects with a "TimeoutError" DOMException after
   * `timeoutMs` (the reader's, or this call's), and with the signal's reason when `signal`
   * aborts; either way an engine still recognising is terminated and replaced, so the work
   * really stops (sharp's decoding, bounded by the pixel limit, finishes in the background).
   */
  async read(
    image: Uint8Array,
    signal?: AbortSignal,
    options: { timeoutMs?: number } = {},
  ): Promise<CaptionText> {
    signal?.throwIfAborted();
    const slot = await this.#acquire(signal);
    const started = performance.now();
    const stop = new AbortController();
    const limit = options.timeoutMs ?? this.#timeoutMs;
    const timer = setTimeout(() => {
      stop.abort(new DOMException(`Caption reading took over ${limit} ms`, "TimeoutError"));
    }, limit);
    const onAbort = () => stop.abort(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
    const step = <T>(p: Promise<T>) => until(p, stop.signal);
    let inFlight = false;
    try {
      const bands = await step(captionBands(image, this.#prep));
      const engine = await step(slot.engine);
      const recognize = async (picture: Picture) => {
        inFlight = true;
        try {
          return await Promise.race([engine.recognizeTsv(picture), engine.crashed]);
        } finally {
          inFlight = false;
        }
      };
      const words = await readBands(bands, recognize, this.#floor, step);
      return {
        text: words.map((w) => w.text).join(" "),
        ms: performance.now() - started,
        words: words.map(({ text, conf, band }) => ({ text, conf, band })),
      };
    } catch (err) {
      // An engine in the middle of a picture cannot be told to stop: its process is killed.
      if (inFlight || err instanceof EngineCrashed) this.#replace(slot);
      throw stop.signal.aborted ? stop.signal.reason : err;
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener("abort", onAbort);
      this.#release(slot);
    }
  }

  /** The process ids of the engines started (to watch their memory or priority). */
  async pids(): Promise<number[]> {
    const engines = await Promise.allSettled(this.#slots.map((s) => s.engine));
    return engines.flatMap((e) => e.status === "fulfilled" ? [e.value.pid] : []);
  }

  /** Terminates the engines; reads still waiting for one reject. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const w of this.#waiting.splice(0)) w.reject(new Error("CaptionReader is closed"));
    await Promise.all(this.#slots.map((s) => s.engine.then((e) => e.terminate(), () => {})));
  }

  #replace(slot: Slot) {
    const old = slot.engine;
    slot.engine = old.then((e) => e.terminate(), () => {})
      .then(() =>
        this.#closed ? Promise.reject(new Error("CaptionReader is closed")) : startEngine()
      );
    // A start that fails is tried again by the next read of this slot (#acquire).
    slot.engine.catch(() => {});
  }

  async #acquire(signal?: AbortSignal): Promise<Slot> {
    if (this.#closed) throw new Error("CaptionReader is closed");
    const free = this.#slots.find((s) => !s.busy);
    const slot = free ?? await new Promise<Slot>((resolve, reject) => {
      const onAbort = () => {
        this.#waiting = this.#waiting.filter((w) => w !== waiter);
        reject(signal?.reason);
      };
      const waiter: Waiter = {
        resolve: (s) => {
          signal?.removeEventListener("abort", onAbort);
          resolve(s);
        },
        reject,
      };
      this.#waiting.push(waiter);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
    slot.busy = true;
    // An engine that died while idle, or whose restart failed, is started again for this read.
    const engine = await slot.engine.catch(() => null);
    if (!engine || engine.dead) {
      slot.engine = startEngine();
      slot.engine.catch(() => {});
    }
    return slot;
  }

  /** Hands the slot to the next waiting read, or marks it free. */
  #release(slot: Slot) {
    slot.busy = false;
    this.#waiting.shift()?.resolve(slot);
  }
}

/** `promise`, or the signal's reason as soon as it aborts. */
function until<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}
