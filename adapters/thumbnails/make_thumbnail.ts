/**
 * The pure thumbnail function: image bytes in, a small WebP out.
 *
 * It blocks a libvips thread for the whole decode, so the server calls it only through the
 * worker pool (`pool.ts`); scripts and tests may call it directly.
 *
 * @module
 */

import sharp from "sharp";
import { SNIFF_BYTES, sniffImage, UnsupportedImageError } from "../../domain/image_sniff.ts";
import { perceptualHash, type RawPixels } from "./pixels.ts";
import { THUMBNAIL_MAX_SIDE } from "../../domain/thumbnail_size.ts";

export { THUMBNAIL_MAX_SIDE };

/** Largest input (width x height) decoded when the caller sets no limit: about a 7000x7000 image. */
export const DEFAULT_MAX_PIXELS = 50_000_000;

/** Limits for one thumbnail. */
export interface ThumbnailOptions {
  /** Longest side of the output; smaller inputs are never enlarged. */
  maxSide?: number;
  /** Refuse inputs whose header claims more pixels than this, before decoding them. */
  maxPixels?: number;
  /**
   * `jpeg`: a JPEG rendition for chat clients that take no WebP (issue 43), transparency on white,
   * with no perceptual hash. Default `webp`.
   */
  format?: "webp" | "jpeg";
}

/** A WebP thumbnail, its size after EXIF orientation and resizing, and the perceptual hash. */
export interface ThumbResult {
  data: Uint8Array;
  width: number;
  height: number;
  /** The 64-bit perceptual hash of the same pixels (domain/similar.ts), as a signed integer; null
   * for a picture without structure (a plain colour). */
  phash: bigint | null;
}

/**
 * Make a WebP thumbnail of frame 0 of `input`, and its perceptual hash from the same decoded
 * pixels; rejects on unsupported, oversized or corrupt input.
 */
export async function makeThumbnail(
  input: Uint8Array,
  opts: ThumbnailOptions = {},
): Promise<ThumbResult> {
  const maxSide = opts.maxSide ?? THUMBNAIL_MAX_SIDE;
  const maxPixels = opts.maxPixels ?? DEFAULT_MAX_PIXELS;
  // libvips would happily open SVG, PDF, TIFF and more; only the sniffed types may reach it.
  const sniffed = sniffImage(input.subarray(0, SNIFF_BYTES));
  if (!sniffed) throw new UnsupportedImageError("Not a supported image");
  if (sniffed.width * sniffed.height > maxPixels) {
    throw new UnsupportedImageError(`Image is too large: ${sniffed.width}x${sniffed.height}`);
  }
  const pixels = await decodeThumbnailPixels(input, maxSide, maxPixels);
  if (opts.format === "jpeg") {
    const jpeg = await sharp(pixels.data, { raw: pixels }).flatten({ background: "#ffffff" })
      .jpeg({ quality: 85 }).toBuffer();
    return { data: new Uint8Array(jpeg), width: pixels.width, height: pixels.height, phash: null };
  }
  // The input is decoded once; the WebP and the hash are both made from its shrunk pixels.
  const [webp, phash] = await Promise.all([
    sharp(pixels.data, { raw: pixels }).webp({ quality: 80 }).toBuffer(),
    perceptualHash(pixels),
  ]);
  // Copy out of Node's pooled Buffer so the result owns (and can transfer) its ArrayBuffer.
  return { data: new Uint8Array(webp), width: pixels.width, height: pixels.height, phash };
}

/** Frame 0 of `input`, EXIF-oriented and shrunk to fit `maxSide`, as raw 8-bit pixels. */
export async function decodeThumbnailPixels(
  input: Uint8Array,
  maxSide: number,
  maxPixels: number,
): Promise<RawPixels> {
  const { data, info } = await sharp(input, {
    // Still checked by libvips against the decoder's own header, which can differ from ours.
    limitInputPixels: maxPixels,
    // "error" rejects truncated files (JPEG, PNG, GIF, WebP, AVIF all verified in the tests) but,
    // unlike the stricter "warning", accepts libjpeg's harmless "extraneous bytes" notices,
    // which many camera and editor JPEGs trigger.
    failOn: "error",
    // Frame 0 only: decoding every frame of an animated GIF multiplies time and memory.
    animated: false,
    pages: 1,
  })
    .autoOrient()
    .resize(maxSide, maxSide, { fit: "inside", withoutEnlargement: true })
    .raw({ depth: "uchar" })
    .toBuffer({ resolveWithObject: true });
  return {
    data: new Uint8Array(data.buffer, data.byteOffset, data.length),
    width: info.width,
    height: info.height,
    channels: info.channels,
  };
}
