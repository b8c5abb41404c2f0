/**
 * The OCR process: CaptionReader starts one per engine (engine.ts) and kills it to stop a
 * recognition at once. It runs tesseract.js in a worker thread (engine_thread.ts, ocr_worker.ts),
 * all of it at nice 19, and answers pictures read from stdin with TSV on stdout, one at a time
 * (frames.ts). Started with a cleared environment, reads of node_modules and this folder only,
 * and the right to lower its threads' priority: no network, no writes, no environment, no
 * subprocesses (engine.ts `ocrCommand`). The first picture it is sent warms the engine up.
 *
 * @module
 */
import { setPriority } from "node:os";
import { startThreadEngine } from "./engine_thread.ts";
import { FrameReader, reply, Status } from "./frames.ts";

// stdout carries the replies: anything else printed goes to stderr.
console.log = console.error;
// This thread only relays, but threads it starts from now on (the engine's) inherit its nice.
try {
  setPriority(0, 19);
} catch { /* without --allow-sys: normal priority */ }

const input = new FrameReader(Deno.stdin.readable);
const output = Deno.stdout.writable.getWriter();

/** The next picture from stdin, or null when the reader has gone. */
async function nextPicture() {
  const head = await input.read(8);
  if (!head) return null;
  const view = new DataView(head.buffer, head.byteOffset, 8);
  const pgm = await input.read(view.getUint32(0, true));
  if (!pgm) return null;
  const enclosed = view.getUint32(4, true);
  return { pgm: pgm.slice(), enclosed: enclosed || undefined };
}

const warmUp = await nextPicture();
if (warmUp) {
  const engine = await startThreadEngine(warmUp);
  await output.write(reply(Status.Ready, ""));
  for (let picture = await nextPicture(); picture; picture = await nextPicture()) {
    try {
      const tsv = await Promise.race([engine.recognizeTsv(picture), engine.crashed]);
      await output.write(reply(Status.Ok, tsv));
    } catch (err) {
      await output.write(reply(Status.Error, String(err)));
    }
  }
}
Deno.exit(0);
