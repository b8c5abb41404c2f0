/**
 * Web Worker that runs `makeThumbnail` off the server's event loop; driven by `pool.ts`.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />

import sharp from "sharp";
import { makeThumbnail } from "./make_thumbnail.ts";
import {
  TEST_CRASH,
  TEST_HANG,
  TEST_HOOKS_NAME_SUFFIX,
  type WorkerRequest,
  type WorkerResponse,
} from "./messages.ts";

// libvips settings are process-wide. Parallelism comes from the pool (one job per worker), so
// one libvips thread per job avoids oversubscribing the cores; the operation cache only holds
// memory, since no two uploads share pixels.
sharp.concurrency(1);
sharp.cache(false);

const testHooks = self.name.endsWith(TEST_HOOKS_NAME_SUFFIX);

/** A 16x16 PNG and a 64x64 JPEG, to load the libraries real jobs need before the pool hands out work. */
const WARMUP_PNG = sharp({ create: { width: 16, height: 16, channels: 3, background: "#888" } })
  .png().toBuffer();
const WARMUP_JPEG = sharp({ create: { width: 64, height: 64, channels: 3, background: "#468" } })
  .jpeg().toBuffer();

/** The input buffer a worker hands the pool at start: a 12 MP JPEG of the benchmarks fits. */
const INPUT_BUFFER_BYTES = 8 * 1024 * 1024;

function reply(message: WorkerResponse, transfer: Transferable[] = []): void {
  self.postMessage(message, transfer);
}

function startsWith(input: Uint8Array, prefix: string): boolean {
  return new TextDecoder().decode(input.subarray(0, prefix.length)) === prefix;
}

self.onmessage = async (event: MessageEvent<WorkerRequest>) => {
  const request = event.data;
  if (request.type === "warmup") {
    await makeThumbnail(new Uint8Array(await WARMUP_PNG));
    await makeThumbnail(new Uint8Array(await WARMUP_JPEG));
    // Written once here, so that no page of it is first touched on the server's event loop.
    const buffer = new ArrayBuffer(INPUT_BUFFER_BYTES);
    new Uint8Array(buffer).fill(1);
    reply({ type: "ready", buffer }, [buffer]);
    return;
  }
  // TEST HOOKS: let tests crash or hang this worker; inert unless the pool enabled them.
  if (testHooks && startsWith(request.input, TEST_CRASH)) throw new Error("Test hook crash");
  if (testHooks && startsWith(request.input, TEST_HANG)) {
    // Blocked, as a decoder stuck in libvips would be, but asleep: terminate() does not stop a
    // thread in a busy loop (denoland/deno#35657), and one left spinning starved the test run.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
  }
  const buffer = request.input.buffer as ArrayBuffer;
  try {
    const thumb = await makeThumbnail(request.input, request.options);
    reply({ type: "done", id: request.id, ...thumb, buffer }, [thumb.data.buffer, buffer]);
  } catch (error) {
    const message = String((error as Error)?.message ?? error);
    reply({ type: "failed", id: request.id, message, buffer }, [buffer]);
  }
};
