/**
 * Web Worker that derives scrypt keys for services/passwords.ts, on its own thread at a low CPU
 * priority (nice +5): the event loop's thread runs at a raised priority (adapters/event_loop.ts) and
 * threads it starts inherit that, so hashing there would compete with every request for the
 * cores. Here a hash waits for a core behind the loop instead.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />

import { scryptSync } from "node:crypto";
import { setPriority } from "node:os";

/** A key to derive. */
export interface DeriveRequest {
  id: number;
  password: string;
  salt: Uint8Array;
  params: { N: number; r: number; p: number };
  keyBytes: number;
}

/** The derived key, or why it failed. */
export type DeriveResponse = { id: number; key: Uint8Array } | { id: number; error: string };

/** The nice value of a hashing thread: below everything else the service runs. */
export const HASH_NICE = 5;

try {
  setPriority(0, HASH_NICE); // this thread only (Linux); lowering is always allowed
} catch {
  // Not on this platform: normal priority.
}

self.onmessage = (event: MessageEvent<DeriveRequest>) => {
  const { id, password, salt, params, keyBytes } = event.data;
  try {
    const maxmem = 128 * params.N * params.r + 16 * 1024 * 1024;
    const key = new Uint8Array(scryptSync(password, salt, keyBytes, { ...params, maxmem }));
    self.postMessage({ id, key } satisfies DeriveResponse, [key.buffer]);
  } catch (e) {
    self.postMessage({ id, error: String(e) } satisfies DeriveResponse);
  }
};
