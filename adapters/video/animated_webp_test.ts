import assert from "node:assert/strict";
import sharp from "sharp";
import { webpFrames } from "./animated_webp.ts";

/** An animated WebP of `delays.length` frames of 32x24, frame i all of grey level 10 * i. */
async function animatedWebp(delays: number[]): Promise<Uint8Array> {
  const [w, h] = [32, 24];
  const raw = new Uint8Array(w * h * 4 * delays.length);
  for (let i = 0; i < delays.length; i++) {
    for (let p = 0; p < w * h; p++) raw.set([10 * i, 10 * i, 10 * i, 255], (i * w * h + p) * 4);
  }
  return new Uint8Array(
    await sharp(raw, { raw: { width: w, height: h * delays.length, channels: 4, pageHeight: h } })
      .webp({ loop: 0, delay: delays, lossless: true })
      .toBuffer(),
  );
}

/** The grey level of each frame given (the first pixel's red). */
async function levels(frames: AsyncIterable<Uint8Array>): Promise<number[]> {
  const out: number[] = [];
  for await (const f of frames) out.push(f[0]);
  return out;
}

const LIMITS = { frames: 1000, pixels: 1e9, chunkPixels: 32 * 24 * 2 };

Deno.test("webpFrames() shows each frame for its delay at a fixed rate, decoding in chunks", async () => {
  // 300 ms, 100 ms, 200 ms; a delay of 0 is shown for 100 ms, as browsers do.
  const webp = await animatedWebp([300, 100, 200, 0]);
  const raw = await webpFrames(webp, 60, { fps: 10, limits: LIMITS });
  assert.ok(raw);
  assert.deepEqual([raw.width, raw.height, raw.fps], [32, 24, 10]);
  // Chunks of two frames: the third and fourth come from a second decoding.
  assert.deepEqual(await levels(raw.frames), [0, 0, 0, 10, 20, 20, 30]);
});

Deno.test("webpFrames() stops at maxSeconds, at the frame bound and at the pixel bound", async () => {
  const webp = await animatedWebp(new Array(20).fill(100));
  const cut = await webpFrames(webp, 0.5, { fps: 10, limits: LIMITS });
  assert.deepEqual(await levels(cut!.frames), [0, 10, 20, 30, 40]);
  const fewer = await webpFrames(webp, 60, { fps: 10, limits: { ...LIMITS, frames: 3 } });
  assert.deepEqual(await levels(fewer!.frames), [0, 10, 20]);
  const smaller = await webpFrames(webp, 60, {
    fps: 10,
    limits: { ...LIMITS, pixels: 32 * 24 * 4 },
  });
  assert.deepEqual(await levels(smaller!.frames), [0, 10, 20, 30]);
});

Deno.test("webpFrames() is null for a still WebP", async () => {
  const still = await sharp({
    create: { width: 8, height: 8, channels: 3, background: { r: 1, g: 2, b: 3 } },
  }).webp().toBuffer();
  assert.equal(await webpFrames(new Uint8Array(still), 60), null);
});
