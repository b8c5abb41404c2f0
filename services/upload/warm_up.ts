/**
 * Start-up warm-up of the upload path, so that the first upload after a start costs what the
 * tenth does: the storage connection and signer (a HEAD of the bucket), the database statements
 * an upload runs before its insert (each prepared on a pooled connection; run on nothing, so
 * nothing is written) and the form parser, content hash and sniffer on a small generated body.
 * The thumbnail workers warm themselves (adapters/thumbnails/thumbnail_worker.ts). Bounded: a dependency that does
 * not answer within WARM_UP_TIMEOUT_MS is left for the first request to find (health says so).
 */
import { addTagsByHash } from "../../db/images.ts";
import { clearDeletes, scheduleDeletes } from "../../db/pending_deletes.ts";
import type { Services } from "../deps.ts";
import { sha256Hex } from "../../domain/hash.ts";
import { MultipartParser } from "../../adapters/http/multipart.ts";
import { sniffImage } from "../../domain/image_sniff.ts";

/** How long start-up waits for the warm-up at most. */
export const WARM_UP_TIMEOUT_MS = 2000;

/** A 1x1 JPEG's header: enough for the sniffer to read a size from. */
const TINY_JPEG = Uint8Array.from([
  0xff,
  0xd8,
  0xff,
  0xc0,
  0x00,
  0x0b,
  0x08,
  0x00,
  0x01,
  0x00,
  0x01,
  0x01,
  0x01,
  0x11,
  0x00,
  0xff,
  0xd9,
]);

/** What the warm-up did, for the start-up log and tests. */
export interface WarmUpReport {
  storage: boolean;
  database: boolean;
  ms: number;
}

/** Runs the warm-up; never throws, and resolves within WARM_UP_TIMEOUT_MS. */
export async function warmUploadPath(
  services: Pick<Services, "sql" | "store">,
): Promise<WarmUpReport> {
  const started = performance.now();
  warmParser();
  const bounded = (p: Promise<unknown>) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    return Promise.race([
      p.then(() => true, () => false),
      new Promise<boolean>((r) => timer = setTimeout(() => r(false), WARM_UP_TIMEOUT_MS)),
    ]).finally(() => clearTimeout(timer));
  };
  const [storage, database] = await Promise.all([
    bounded(services.store.check()),
    bounded((async () => {
      const { sql } = services;
      await addTagsByHash(sql, sha256Hex("warm-up"), []);
      await scheduleDeletes(sql, [], 0);
      await clearDeletes(sql, []);
    })()),
  ]);
  return { storage, database, ms: performance.now() - started };
}

/** The form parser, the hash and the sniffer over a small form, read in a few pieces. */
function warmParser() {
  const boundary = "warm-up-boundary-0123456789";
  const te = new TextEncoder();
  const head = te.encode(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.jpg"\r\n` +
      `Content-Type: image/jpeg\r\n\r\n`,
  );
  const tail = te.encode(`\r\n--${boundary}--\r\n`);
  const body = new Uint8Array(head.length + TINY_JPEG.length + tail.length);
  body.set(head);
  body.set(TINY_JPEG, head.length);
  body.set(tail, head.length + TINY_JPEG.length);
  for (let round = 0; round < 20; round++) {
    const parser = new MultipartParser(boundary, (data) => sha256Hex(data));
    for (let cut = 16; cut < body.length; cut += 16) parser.advance(body, cut);
    parser.advance(body, body.length);
    for (const part of parser.finish(body)) sniffImage(part.data);
  }
}
