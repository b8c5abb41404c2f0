/**
 * Hostile inputs: corrupted bytes, pixel bombs (headers that claim huge images), and a
 * thumbnailer that sends jobs to sabotaged workers.
 */
import type { Thumbnailer } from "../../services/deps.ts";
import type { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import { concat, te } from "./bytes.ts";
import { mulberry32 } from "./random.ts";

/** `bytes` with `n` bits flipped at positions at or after `from`. */
export function flipBits(bytes: Uint8Array, n: number, from: number, seed: number): Uint8Array {
  const out = bytes.slice();
  const rnd = mulberry32(seed);
  for (let i = 0; i < n; i++) {
    const at = from + Math.floor(rnd() * (out.length - from));
    out[at] ^= 1 << Math.floor(rnd() * 8);
  }
  return out;
}

const u32be = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const u24le = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255];

/** Headers only, claiming `w`x`h` pixels, for each sniffed format except AVIF. */
export const pixelBombs = {
  png: (w: number, h: number) =>
    new Uint8Array([
      0x89,
      0x50,
      0x4e,
      0x47,
      0x0d,
      0x0a,
      0x1a,
      0x0a,
      ...[0, 0, 0, 13],
      ...te("IHDR"),
      ...u32be(w),
      ...u32be(h),
      8,
      2,
      0,
      0,
      0,
      ...[0, 0, 0, 0], // CRC (nobody should get as far as checking it)
    ]),
  gif: (w: number, h: number) =>
    new Uint8Array([
      ...te("GIF89a"),
      w & 255,
      w >> 8,
      h & 255,
      h >> 8,
      0x80,
      0,
      0,
      0,
      0,
      0,
      0xff,
      0xff,
      0xff,
      0x2c,
      0,
      0,
      0,
      0,
      w & 255,
      w >> 8,
      h & 255,
      h >> 8,
      0,
      0x02,
      0x02,
      0x44,
      0x01,
      0,
      0x3b,
    ]),
  // A 1 x 1 logical screen around a w x h frame: the canvas a decoder allocates is the frame's.
  gifFrame: (w: number, h: number) =>
    new Uint8Array([
      ...te("GIF89a"),
      ...[1, 0, 1, 0, 0x80, 0, 0],
      ...[0, 0, 0, 0xff, 0xff, 0xff],
      ...[0x2c, 0, 0, 0, 0, w & 255, w >> 8, h & 255, h >> 8, 0],
      ...[0x02, 0x02, 0x44, 0x01, 0, 0x3b],
    ]),
  jpeg: (w: number, h: number) =>
    new Uint8Array([
      0xff,
      0xd8,
      0xff,
      0xc0,
      0x00,
      0x11,
      0x08,
      h >> 8,
      h & 255,
      w >> 8,
      w & 255,
      3,
      1,
      0x22,
      0,
      2,
      0x11,
      1,
      3,
      0x11,
      1,
      0xff,
      0xd9,
    ]),
  webp: (w: number, h: number) =>
    new Uint8Array([
      ...te("RIFF"),
      22,
      0,
      0,
      0,
      ...te("WEBP"),
      ...te("VP8X"),
      10,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      ...u24le(w - 1),
      ...u24le(h - 1),
    ]),
};

/**
 * A thumbnailer whose every job goes to `pool` behind `prefix` (TEST_CRASH or TEST_HANG), so a
 * real upload, which is sniffed first, still reaches a sabotaged worker. `armed()` decides per
 * job; when it returns false the job goes through untouched.
 */
export function sabotaged(
  pool: ThumbnailPool,
  prefix: string,
  armed: () => boolean = () => true,
): Thumbnailer {
  return {
    thumbnail: (b) => pool.thumbnail(armed() ? concat(te(prefix), b) : b),
  };
}
