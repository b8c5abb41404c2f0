/**
 * Photo-like test images: smooth gradients plus noise, so they compress like photos; and a JPEG
 * with other bytes but the same pixels. Used by the benchmarks and the upload tests.
 *
 * @module
 */
import sharp from "sharp";

/**
 * A realistic-looking photo-like image: smooth colour gradients plus per-pixel noise (so it
 * compresses like a photo, not like a solid colour), different for every `seed`.
 */
export function photoPixels(width: number, height: number, seed: number): Uint8Array {
  const px = new Uint8Array(width * height * 3);
  let s = (seed * 2654435761) >>> 0 || 1;
  const rand = () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s & 0xff;
  };
  const fx = 0.5 + (seed % 7) * 0.1;
  for (let y = 0; y < height; y++) {
    const gy = y / height;
    for (let x = 0; x < width; x++) {
      const gx = x / width;
      const i = (y * width + x) * 3;
      const n = (rand() & 63) - 32;
      const wave = 40 * Math.sin((gx * fx + gy) * 12);
      px[i] = clamp(255 * gx + n + wave);
      px[i + 1] = clamp(255 * gy + n - wave);
      px[i + 2] = clamp(128 + 100 * Math.sin((gx - gy) * 8 + seed) + n);
    }
  }
  return px;
}

const clamp = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v);

/** A photo-like JPEG of `width`x`height` (quality 90), different for every `seed`. */
export async function photoJpeg(width: number, height: number, seed: number): Promise<Uint8Array> {
  const raw = photoPixels(width, height, seed);
  const out = await sharp(raw, { raw: { width, height, channels: 3 } }).jpeg({ quality: 90 })
    .toBuffer();
  return new Uint8Array(out);
}

/**
 * The same JPEG with a COM segment (`tag`) right after SOI: a valid JPEG with other bytes (and
 * so another content hash) but the same pixels, without re-encoding 12 megapixels.
 */
export function withComment(jpeg: Uint8Array, tag: string): Uint8Array {
  const text = new TextEncoder().encode(tag);
  const len = text.length + 2;
  const out = new Uint8Array(jpeg.length + 4 + text.length);
  out.set(jpeg.subarray(0, 2), 0);
  out.set([0xff, 0xfe, len >> 8, len & 0xff], 2);
  out.set(text, 6);
  out.set(jpeg.subarray(2), 6 + text.length);
  return out;
}
