/**
 * The OCR engine's thread (tesseract.js `workerPath`): tesseract.js's node worker script, put
 * together here so that the thread can (1) lower its own CPU priority to nice 19, leaving the CPU
 * to request handling and thumbnails first; (2) run the enclosed-region filter (enclosed.ts) on
 * pictures that ask for it; (3) refuse every fetch, so that a default that points at a CDN can
 * never reach the network (code, wasm and model come from node_modules).
 *
 * Linux's nice value belongs to a thread, and setpriority() with id 0 means the calling thread
 * (the TID from /proc/thread-self, as in `setPriority(tid, 19)`, would need --allow-all in Deno).
 * Without --allow-sys the thread keeps normal priority and recognition works the same.
 *
 * @module
 */
import { setPriority } from "node:os";
import { parentPort } from "node:worker_threads";
import worker from "tesseract.js/src/worker-script/index.js";
import getCore from "tesseract.js/src/worker-script/node/getCore.js";
import gunzip from "tesseract.js/src/worker-script/node/gunzip.js";
import cache from "tesseract.js/src/worker-script/node/cache.js";
import { ENCLOSED_OPTION, enclosedPgm } from "./enclosed.ts";

// The OCR process reserves stdout for its replies (ocr_process.ts); the wasm core, loaded later,
// prints through console.log.
console.log = console.error;

/** The nice value of the OCR thread: the lowest priority. */
export const OCR_NICE = 19;

try {
  setPriority(0, OCR_NICE);
} catch (err) {
  console.warn(`OCR thread keeps normal priority: ${err}`);
}

interface Packet {
  action: string;
  payload?: { image?: Uint8Array; options?: Record<string, unknown> };
}

parentPort!.on("message", (packet: Packet) => {
  const threshold = packet.payload?.options?.[ENCLOSED_OPTION];
  if (packet.action === "recognize" && typeof threshold === "number" && packet.payload?.image) {
    packet.payload.image = enclosedPgm(packet.payload.image, threshold);
  }
  worker.dispatchHandlers(packet, (obj: unknown) => parentPort!.postMessage(obj));
});

worker.setAdapter({
  getCore,
  gunzip,
  fetch: (url: string) => Promise.reject(new Error(`OCR engine may not fetch ${url}`)),
  ...cache,
});
