import { deepEqual, equal, ok, rejects } from "node:assert/strict";
import sharp, { type Sharp, type SharpOptions } from "sharp";
import { hammingDistance } from "../../domain/phash.ts";
import { UnsupportedImageError } from "../../domain/image_sniff.ts";
import { makeThumbnail } from "./make_thumbnail.ts";

function solid(width: number, height: number, background = "#2a8") {
  return sharp({ create: { width, height, channels: 3, background } });
}

/** A noisy image, so that a truncated file really lacks pixel data. */
function noisy(width: number, height: number) {
  return sharp({
    create: {
      width,
      height,
      channels: 3,
      background: "#000",
      noise: { type: "gaussian", mean: 128, sigma: 40 },
    },
  });
}

async function bytes(image: Sharp): Promise<Uint8Array> {
  return new Uint8Array(await image.toBuffer());
}

async function centrePixel(webp: Uint8Array): Promise<number[]> {
  const { data, info } = await sharp(webp).removeAlpha().raw().toBuffer({
    resolveWithObject: true,
  });
  const at = (Math.floor(info.height / 2) * info.width + Math.floor(info.width / 2)) * 3;
  return [...data.subarray(at, at + 3)];
}

function near(actual: number[], expected: number[], tolerance = 12): boolean {
  return actual.every((v, i) => Math.abs(v - expected[i]) <= tolerance);
}

for (const [width, height] of [[1200, 800], [800, 1200]]) {
  Deno.test(`makeThumbnail() fits ${width}x${height} inside 400 keeping its aspect ratio`, async () => {
    const thumb = await makeThumbnail(await bytes(solid(width, height).jpeg()));
    const meta = await sharp(thumb.data).metadata();
    equal(meta.format, "webp");
    deepEqual([meta.width, meta.height], [thumb.width, thumb.height]);
    equal(Math.max(thumb.width, thumb.height), 400);
    const scale = 400 / Math.max(width, height);
    ok(Math.abs(thumb.width - width * scale) <= 1 && Math.abs(thumb.height - height * scale) <= 1);
  });
}

Deno.test("makeThumbnail() does not enlarge a small image", async () => {
  const thumb = await makeThumbnail(await bytes(solid(100, 60).png()));
  deepEqual([thumb.width, thumb.height], [100, 60]);
  const meta = await sharp(thumb.data).metadata();
  deepEqual([meta.width, meta.height], [100, 60]);
});

Deno.test("makeThumbnail() honours maxSide", async () => {
  const thumb = await makeThumbnail(await bytes(solid(300, 150).webp()), { maxSide: 64 });
  deepEqual([thumb.width, thumb.height], [64, 32]);
});

Deno.test("makeThumbnail() takes frame 0 of an animated GIF", async () => {
  // Two stacked 120x80 frames: red on top (frame 0), blue below (frame 1).
  const frame = 120 * 80 * 3;
  const raw = new Uint8Array(frame * 2);
  for (let i = 0; i < frame * 2; i += 3) raw.set(i < frame ? [230, 20, 20] : [20, 20, 230], i);
  const gif = await bytes(
    sharp(raw, { raw: { width: 120, height: 160, channels: 3, pageHeight: 80 } }).gif(),
  );
  const meta = await sharp(gif).metadata();
  equal(meta.pages, 2);
  // The fixture really differs between frames, or this test could not fail.
  ok(near(await centrePixel(await bytes(sharp(gif, { page: 1 }).webp())), [20, 20, 230]));
  const thumb = await makeThumbnail(gif);
  deepEqual([thumb.width, thumb.height], [120, 80]);
  ok(near(await centrePixel(thumb.data), [230, 20, 20]));
});

Deno.test("makeThumbnail() applies EXIF orientation", async () => {
  const jpeg = await bytes(solid(200, 100).jpeg().withMetadata({ orientation: 6 }));
  equal((await sharp(jpeg).metadata()).orientation, 6);
  const thumb = await makeThumbnail(jpeg);
  deepEqual([thumb.width, thumb.height], [100, 200]);
  // The orientation tag is gone with the rest of the metadata (no GPS leaks into thumbnails).
  equal((await sharp(thumb.data).metadata()).orientation, undefined);
});

Deno.test("makeThumbnail() keeps alpha", async () => {
  const png = await bytes(
    sharp({ create: { width: 50, height: 40, channels: 4, background: "#0000" } }).png(),
  );
  equal((await sharp((await makeThumbnail(png)).data).metadata()).hasAlpha, true);
});

/**
 * A refusal by the decoder: libvips's complaint, never one of our own errors. libvips keeps one
 * error buffer per process and the first reader empties it, so while another decode fails at the
 * same moment (the pool's other workers; a test file's neighbours in CI) sharp may read it empty
 * and say "Unknown error" (measured: 111 of 200 concurrent truncated decodes), or its own prefix
 * with nothing after it ("Input buffer has corrupt header: ", seen under load).
 */
function decoderRefusal(complaint: RegExp) {
  return (e: unknown) =>
    e instanceof Error && !(e instanceof UnsupportedImageError) &&
    (complaint.test(e.message) || /^(Unknown error|Input buffer has corrupt header: ?)$/
      .test(e.message));
}

/** What libvips says about each truncated format: the decoder's own complaint, nothing else. */
const truncated = {
  jpeg: /VipsJpeg: premature end of JPEG image/,
  png: /vipspng: libpng read error/,
  gif: /gifload_buffer: Unexpected end of GIF source data/,
  webp: /webp: unable to parse image/,
  avif: /heif: Invalid input: Unexpected end of file/,
} as const;

for (const [format, message] of Object.entries(truncated)) {
  Deno.test(`makeThumbnail() rejects a truncated ${format.toUpperCase()}`, async () => {
    const whole = await bytes(noisy(320, 240).toFormat(format as keyof typeof truncated));
    await makeThumbnail(whole); // the untruncated file is fine
    await rejects(makeThumbnail(whole.subarray(0, whole.length >> 1)), decoderRefusal(message));
  });
}

Deno.test("makeThumbnail() rejects a JPEG with trailing bytes cut mid-scan", async () => {
  const whole = await bytes(noisy(640, 480).jpeg());
  await rejects(
    makeThumbnail(whole.subarray(0, whole.length - 64)),
    decoderRefusal(/premature end/),
  );
});

Deno.test("makeThumbnail() refuses formats that were not sniffed, before libvips sees them", async () => {
  const svg = new TextEncoder().encode(
    '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect width="10" height="10"/></svg>',
  );
  await sharp(svg).png().toBuffer(); // libvips itself would render it
  await rejects(makeThumbnail(svg), UnsupportedImageError);
  const tiff = await bytes(solid(20, 20).tiff());
  await rejects(makeThumbnail(tiff), UnsupportedImageError);
  await rejects(makeThumbnail(new Uint8Array(0)), UnsupportedImageError);
});

Deno.test("makeThumbnail() refuses an image over maxPixels", async () => {
  const png = await bytes(solid(300, 200).png());
  await rejects(makeThumbnail(png, { maxPixels: 59_999 }), /too large: 300x200/);
  equal((await makeThumbnail(png, { maxPixels: 60_000 })).width, 300);
});

/** A picture with structure in both directions, so a rotation changes its hash. */
function structured(width: number, height: number) {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">
    <rect width="100%" height="100%" fill="#fff"/>
    <rect x="0" y="0" width="${width / 3}" height="${height / 2}" fill="#123"/>
    <circle cx="${width * 0.7}" cy="${height * 0.7}" r="${height / 5}" fill="#c42"/>
    <rect x="${width / 2}" y="${height / 10}" width="${width / 8}" height="${
    height / 4
  }" fill="#4a4"/>
  </svg>`;
  return sharp(new TextEncoder().encode(svg));
}

Deno.test("makeThumbnail() hashes the EXIF-oriented pixels", async () => {
  const upright = await bytes(structured(600, 400).rotate(90).jpeg());
  // The same picture stored sideways, with the EXIF tag that turns it upright.
  const tagged = await bytes(structured(600, 400).jpeg().withMetadata({ orientation: 6 }));
  const sideways = await bytes(structured(600, 400).jpeg());
  const [a, b, c] = (await Promise.all([upright, tagged, sideways].map((x) => makeThumbnail(x))))
    .map((t) => ({ phash: t.phash! }));
  ok(hammingDistance(a.phash, b.phash) <= 4, `oriented: ${hammingDistance(a.phash, b.phash)}`);
  ok(hammingDistance(a.phash, c.phash) > 16, `unoriented: ${hammingDistance(a.phash, c.phash)}`);
});

Deno.test("makeThumbnail() hashes frame 0 of an animated GIF", async () => {
  const [w, h] = [300, 200];
  const first = await structured(w, h).removeAlpha().raw().toBuffer();
  const second = await structured(w, h).removeAlpha().flop().raw().toBuffer();
  const gif = await bytes(
    sharp(new Uint8Array([...first, ...second]), {
      raw: { width: w, height: h * 2, channels: 3, pageHeight: h },
    } as SharpOptions).gif(),
  );
  const [animated, still, flopped] = await Promise.all([
    makeThumbnail(gif),
    makeThumbnail(await bytes(structured(w, h).png())),
    makeThumbnail(await bytes(structured(w, h).flop().png())),
  ]);
  ok(hammingDistance(animated.phash!, still.phash!) <= 6);
  ok(hammingDistance(animated.phash!, flopped.phash!) > 16);
});

Deno.test("makeThumbnail() gives a plain picture no hash: plain colours would all look alike", async () => {
  const [red, blue] = await Promise.all([
    makeThumbnail(await bytes(solid(300, 200, "#e11").png())),
    makeThumbnail(await bytes(solid(300, 200, "#11e").jpeg())),
  ]);
  equal(red.phash, null);
  equal(blue.phash, null);
  equal(typeof (await makeThumbnail(await bytes(structured(300, 200).png()))).phash, "bigint");
});
