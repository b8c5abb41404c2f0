/**
 * Sends a request whose body is bytes in memory through node:http(s) instead of fetch. fetch
 * copies such a body before it sends it (the Fetch standard says to), and a fresh copy of an
 * upload costs the event loop page faults; twenty uploads at once queued that behind every health
 * probe (B3). node:http writes the caller's bytes to the socket as they are, spread over the
 * writes (bench/RESULTS.md#notes-moved-from-code-comments).
 *
 * Each put has a connection of its own (no keep-alive agent): an idle pooled socket would outlive
 * every test that stores a file, and a connection costs little beside a multi-megabyte body (one
 * handshake more per upload on TLS).
 */
import http from "node:http";
import https from "node:https";
import { Buffer } from "node:buffer";
import { Readable } from "node:stream";
import { yieldIfBusy } from "../event_loop.ts";

/** The most written to the socket at once. */
const WRITE_BYTES = 256 * 1024;

/**
 * Sends `body` to `url` with `headers` (Content-Length added); resolves with the answer as a
 * fetch Response. `signal` aborts it, before or after the head has arrived.
 */
export function sendBytes(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: Uint8Array,
  signal: AbortSignal,
): Promise<Response> {
  return new Promise<Response>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const req = (url.protocol === "https:" ? https : http).request(url, {
      method,
      headers: { ...headers, "content-length": String(body.length) },
      agent: false,
    }, (res) => {
      const answer = new Headers();
      for (const [name, value] of Object.entries(res.headers)) {
        if (value !== undefined) answer.set(name, Array.isArray(value) ? value.join(", ") : value);
      }
      const status = res.statusCode ?? 0;
      const empty = method === "HEAD" || status === 204 || status === 304;
      if (empty) res.resume();
      resolve(
        new Response(empty ? null : Readable.toWeb(res) as ReadableStream<Uint8Array>, {
          status,
          headers: answer,
        }),
      );
    });
    const abort = () => req.destroy(signal.reason);
    signal.addEventListener("abort", abort, { once: true });
    req.on("close", () => signal.removeEventListener("abort", abort));
    req.on("error", reject);
    // In pieces, the next once the last is taken and the loop has had its turn
    // (adapters/event_loop.ts): the runtime copies what it is given, and a write of a whole upload
    // (or pieces written in one go) is one long stretch of the event loop
    // (bench/RESULTS.md#notes-moved-from-code-comments).
    const bytes = Buffer.from(body.buffer, body.byteOffset, body.length);
    let at = 0;
    const write = async (err?: Error | null) => {
      await yieldIfBusy();
      if (err || req.destroyed) return;
      if (at >= bytes.length) return void req.end();
      req.write(bytes.subarray(at, at += WRITE_BYTES), write);
    };
    write();
  });
}
