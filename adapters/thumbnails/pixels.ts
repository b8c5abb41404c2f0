/**
 * Perceptual hashes from decoded pixels, for the thumbnail worker: it hands over the raw,
 * oriented (frame 0) pixels it decoded for the thumbnail, and libvips shrinks them to the tiny
 * greyscale square the hash reads. Transparent areas count as white, as a board shows them.
 */
import sharp from "sharp";
import { DCT_SIDE, dctHash, GRADIENT_SIZE, gradientHash } from "../../domain/phash.ts";

/** Raw pixels as sharp describes them. */
export interface RawPixels {
  data: Uint8Array;
  width: number;
  height: number;
  channels: 1 | 2 | 3 | 4;
}

async function greySquare(pixels: RawPixels, width: number, height: number): Promise<Uint8Array> {
  const { data, width: w, height: h, channels } = pixels;
  const grey = await sharp(data, { raw: { width: w, height: h, channels } })
    .flatten({ background: "#ffffff" })
    .greyscale()
    .resize(width, height, { fit: "fill" })
    .extractChannel(0)
    .raw()
    .toBuffer();
  return new Uint8Array(grey);
}

/**
 * The stored perceptual hash of these pixels: the gradient hash (dHash). Compared with the DCT
 * pHash on the corpus of bench/b11_similar_quality.ts (3,600 reposts), it finds as many reposts
 * at a smaller distance, where the indexed search needs fewer probes (B11; figures in
 * bench/RESULTS.md#notes-moved-from-code-comments).
 *
 * Null for a picture with no visible structure at that scale (a plain colour, a faint gradient):
 * every such picture would hash alike, so a red square would "look like" a blue one.
 */
export async function perceptualHash(pixels: RawPixels): Promise<bigint | null> {
  const grey = await greySquare(pixels, GRADIENT_SIZE.width, GRADIENT_SIZE.height);
  return isFlat(grey) ? null : gradientHash(grey);
}

/** Less than this many grey levels between the darkest and lightest cell: nothing to hash. */
const FLAT_RANGE = 8;

function isFlat(grey: Uint8Array): boolean {
  let min = 255, max = 0;
  for (const v of grey) {
    if (v < min) min = v;
    if (v > max) max = v;
  }
  return max - min < FLAT_RANGE;
}

/** The gradient hash (dHash) of these pixels. */
export async function gradientHashOf(pixels: RawPixels): Promise<bigint> {
  return gradientHash(await greySquare(pixels, GRADIENT_SIZE.width, GRADIENT_SIZE.height));
}

/** The DCT pHash of these pixels: measured against the dHash, not stored. */
export async function dctHashOf(pixels: RawPixels): Promise<bigint> {
  return dctHash(await greySquare(pixels, DCT_SIDE, DCT_SIDE));
}
