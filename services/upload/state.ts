/**
 * What the uploads of one service instance share while they run: the originals being written to
 * storage (a few at a time), the uploads of the same content in flight (one store-and-insert for
 * all of them), and whether uploads are under way (caption recognition waits for a quiet moment).
 * The wiring (wiring/service.ts) builds one per service and hands it to the upload path and to
 * caption recognition; nothing of it is module state, so two services in one process (replica
 * tests) keep apart.
 */
import { Slots } from "../../domain/slots.ts";

/** Originals written to storage at once by this process (uploads, imports and restores alike). */
export const PUT_SLOTS = 3;
/**
 * The longest an original waits for a slot before it is written anyway (a put still within its
 * S3_TIMEOUT_SECONDS holds its slot). Writing is not what limits the upload rate (thumbnails
 * are), but twenty originals written at once meant every event-loop turn served a write of each:
 * a few at a time lowers B3's health p99 during a burst and the burst takes as long (figures in
 * bench/RESULTS.md#notes-moved-from-code-comments).
 */
export const PUT_SLOT_WAIT_MS = 1000;

/** The shared state of one service's uploads. */
export class UploadState {
  /** Originals being written to storage: at most PUT_SLOTS at once. */
  readonly putting: Slots;
  /** Uploads of the same content (by hash) in flight, so they share one store-and-insert. */
  readonly inflight = new Map<string, Promise<unknown>>();
  #ingesting = 0;
  #lastEnded = -Infinity;

  /**
   * `putWaitMs`: how long an original waits for a slot before it is written anyway (the service
   * uses PUT_SLOT_WAIT_MS; a test that counts the writes at once gives one no run can reach).
   */
  constructor(putWaitMs = PUT_SLOT_WAIT_MS) {
    this.putting = new Slots(PUT_SLOTS, putWaitMs);
  }

  /** Counts an upload as being ingested until it is disposed of. */
  ingesting(): Disposable {
    this.#ingesting++;
    return {
      [Symbol.dispose]: () => {
        this.#ingesting--;
        this.#lastEnded = performance.now();
      },
    };
  }

  /**
   * Whether uploads are under way: one is being ingested, or one ended within `quietMs` (a client
   * sending one after another leaves only short gaps). Background work of lower priority (caption
   * recognition) waits for a quiet moment.
   */
  busy(quietMs: number): boolean {
    return this.#ingesting > 0 || performance.now() - this.#lastEnded < quietMs;
  }
}
