/**
 * The messages between the thumbnail pool and its workers, as typed unions on `type`.
 *
 * @module
 */

import type { ThumbnailOptions } from "./make_thumbnail.ts";

/** Load sharp and libvips by making a tiny thumbnail, so the first real job pays no start-up. */
export interface WarmupRequest {
  type: "warmup";
}

/**
 * One job; `input` is a view of a buffer that is transferred, so the worker owns it until it
 * hands the buffer back with its answer (the pool copies the next job into it).
 */
export interface ThumbnailJobRequest {
  type: "thumbnail";
  id: number;
  input: Uint8Array;
  options: ThumbnailOptions;
}

/** What the pool sends a worker. */
export type WorkerRequest = WarmupRequest | ThumbnailJobRequest;

/**
 * The worker has finished its warmup and takes jobs. `buffer` is an input buffer it allocated
 * and wrote to (so its pages are mapped off the event loop), transferred to the pool.
 */
export interface ReadyResponse {
  type: "ready";
  buffer: ArrayBuffer;
}

/** A finished job; `data` and the job's input `buffer` are transferred back. */
export interface DoneResponse {
  type: "done";
  id: number;
  data: Uint8Array;
  width: number;
  height: number;
  /** The perceptual hash of the same pixels; null for a plain picture. */
  phash: bigint | null;
  buffer: ArrayBuffer;
}

/** A job the image itself made fail (corrupt, unsupported, too large); the worker lives on. */
export interface FailedResponse {
  type: "failed";
  id: number;
  message: string;
  buffer: ArrayBuffer;
}

/** What a worker sends the pool. */
export type WorkerResponse = ReadyResponse | DoneResponse | FailedResponse;

/**
 * TEST HOOKS. A worker named with this suffix treats inputs that start with `TEST_CRASH` or
 * `TEST_HANG` as orders to throw uncaught or to block (60 s, asleep), so tests can drive the pool's
 * crash and timeout paths through its public API. Production workers never get the suffix.
 */
export const TEST_HOOKS_NAME_SUFFIX = "+test-hooks";

/** TEST HOOK input prefix: the worker throws an uncaught error (only with test hooks on). */
export const TEST_CRASH = "TEST_CRASH";

/** TEST HOOK input prefix: the worker blocks for 60 s, asleep (only with test hooks on). */
export const TEST_HANG = "TEST_HANG";
