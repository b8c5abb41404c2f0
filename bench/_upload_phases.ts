/**
 * B3 helper: which step of an upload blocks the event loop? Runs each step the service takes
 * for an upload (lib/images/ingest.ts, api/upload_body.ts) on N distinct 12 MP JPEG bodies at once,
 * one step at a time, in this fresh process with the service's own modules, and prints, per
 * step, the wall time and the longest gap a 1 ms timer saw: `{"step": {"ms": n, "gap": n}}`.
 * Needs S3_ENDPOINT and S3_BUCKET (s3rver).
 */
import { readUploadForm } from "../api/upload_body.ts";
import { sha256Hex } from "../lib/hash.ts";
import { ThumbnailPool } from "../lib/images/thumbnails/pool.ts";
import { multipartBody, photoJpeg, s3rverStore, watchEventLoop, withComment } from "./_lib.ts";

const N = Number(Deno.env.get("PHASE_UPLOADS") ?? "20");
const jpeg = await photoJpeg(4000, 3000, 7);
const files = Array.from({ length: N }, (_, i) => withComment(jpeg, `phase-${i}`));
const store = s3rverStore({
  endpoint: Deno.env.get("S3_ENDPOINT")!,
  bucket: Deno.env.get("S3_BUCKET")!,
});
const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
await store.put("warmup", files[0], { contentLength: files[0].length, contentType: "image/jpeg" });
await pool.thumbnail(files[0]);

const out: Record<string, { ms: number; gap: number }> = {};
async function step(name: string, fn: (bytes: Uint8Array, i: number) => Promise<unknown>) {
  const watch = watchEventLoop();
  const t0 = performance.now();
  await Promise.all(files.map(fn));
  out[name] = { ms: performance.now() - t0, gap: watch.stop() };
}

const bodies = files.map((f) => multipartBody(f, ["bench"]));
await step("read and parse the multipart body (readUploadForm)", (_, i) =>
  readUploadForm(
    new Request("http://localhost/api/v1/images", {
      method: "POST",
      headers: { "content-type": bodies[i].contentType },
      body: bodies[i].body,
    }),
    20_971_520,
  ));
await step("SHA-256 (sha256Hex)", (bytes) => Promise.resolve(sha256Hex(bytes)));
await step(
  "S3 put of the original (S3Store.put)",
  (bytes, i) =>
    store.put(`phase/${i}`, bytes, { contentLength: bytes.length, contentType: "image/jpeg" }),
);
await step("thumbnail through the pool (1 worker)", (bytes) => pool.thumbnail(bytes));
pool.close();
console.log(JSON.stringify(out));
Deno.exit(0);
