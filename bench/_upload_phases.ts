/**
 * B3 helper: which step of an upload blocks the event loop? Runs each step the service takes
 * for an upload (api/upload_body.ts, services/upload/ingest.ts) on N distinct 12 MP JPEG bodies at
 * once, one step at a time, in this fresh process with the service's own modules, and prints,
 * per step, the wall time, the longest gap a 1 ms timer saw and the CPU time of the main thread
 * (the event loop's, robust to a busy machine where wall times are not):
 * `{"step": {"ms": n, "gap": n, "cpu": n}}`.
 * The bodies arrive as a socket would deliver them: 64 KB at a time, one task per chunk.
 * Needs S3_ENDPOINT and S3_BUCKET (s3rver).
 */
import { readUploadForm } from "../api/upload_body.ts";
import { sniffImage } from "../domain/image_sniff.ts";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import { cachedPhotoJpeg } from "./_lib/images.ts";
import { multipartBody } from "../tests/_harness/upload_form.ts";
import { s3rverStore } from "../tests/_harness/s3.ts";
import { watchEventLoop } from "../tests/_harness/loop_watch.ts";
import { withComment } from "../tests/_harness/photos.ts";
import { statCpuMs } from "../tests/_harness/threads.ts";

const N = Number(Deno.env.get("PHASE_UPLOADS") ?? "20");
const CHUNK = 64 * 1024;
const jpeg = await cachedPhotoJpeg(4000, 3000, 7);
const files = Array.from({ length: N }, (_, i) => withComment(jpeg, `phase-${i}-${Date.now()}`));
// A long deadline: s3rver on a busy machine takes its time with 20 puts at once, and this
// measures the event loop, not s3rver.
const store = s3rverStore({
  endpoint: Deno.env.get("S3_ENDPOINT")!,
  bucket: Deno.env.get("S3_BUCKET")!,
}, 300_000);
const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
await store.put("warmup", files[0], { contentLength: files[0].length, contentType: "image/jpeg" });
await pool.thumbnail(files[0]);

/** CPU time of this process's main thread (the event loop's), ms; 10 ms resolution. */
function mainThreadCpuMs(): number {
  return statCpuMs(Deno.readTextFileSync(`/proc/self/task/${Deno.pid}/stat`));
}

const out: Record<string, { ms: number; gap: number; cpu: number }> = {};
async function step<T>(name: string, fn: (bytes: Uint8Array, i: number) => Promise<T>) {
  const watch = watchEventLoop();
  const cpu0 = mainThreadCpuMs();
  const t0 = performance.now();
  const results = await Promise.all(files.map(fn));
  out[name] = { ms: performance.now() - t0, gap: watch.stop().gap, cpu: mainThreadCpuMs() - cpu0 };
  return results;
}

/** A request whose body arrives 64 KB per task, as from a socket. */
function arriving(form: { body: Uint8Array; contentType: string }) {
  let at = 0;
  // A byte stream, as Deno.serve's request bodies are.
  const body = new ReadableStream({
    type: "bytes",
    async pull(c) {
      await new Promise((r) => setTimeout(r, 0));
      if (at >= form.body.length) {
        c.close();
        c.byobRequest?.respond(0);
        return;
      }
      c.enqueue(form.body.slice(at, at += CHUNK));
    },
  });
  return new Request("http://localhost/api/v1/images", {
    method: "POST",
    headers: { "content-type": form.contentType, "content-length": String(form.body.length) },
    body,
  });
}

const bodies = files.map((f) => multipartBody(f, ["bench"]));
const forms = await step(
  "read, parse and hash the body as it arrives (readUploadForm)",
  (_, i) => readUploadForm(arriving(bodies[i]), 20_971_520),
);
await step("sniff (sniffImage)", (bytes) => Promise.resolve(sniffImage(bytes)));
await step(
  "S3 put of the original with its hash (S3Store.put)",
  (bytes, i) =>
    store.put(`phase/${i}`, bytes, {
      contentLength: bytes.length,
      contentType: "image/jpeg",
      sha256: forms[i].sha256,
    }),
);
await step("thumbnail through the pool (1 worker)", (bytes) => pool.thumbnail(bytes));
pool.close();
console.log(JSON.stringify(out));
Deno.exit(0);
