/**
 * Turns an uploaded image into the few greyscale pictures the OCR engine reads. Captions sit in
 * the top and bottom third, and are mostly white with a dark outline, which the engine reads
 * badly as it is ("THUMBS UP" came back "NHIUMBISHUIP:"). So each band is read as a variant
 * that keeps only near-white pixels, as black on white; a median filter first turns a photo's
 * grain into flat areas, which the engine reads faster and with less junk. A black-on-white
 * caption bar comes out as white on black, which Tesseract inverts itself. All pixel work runs
 * in sharp (libvips threads), off the event loop.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import sharp from "sharp";

/** One band of the image, greyscale, at the width the engine reads. */
export interface Band {
  name: "top" | "bottom";
  width: number;
  height: number;
  pixels: Uint8Array;
}

/**
 * `white240`: pixels of at least 240 become black on white, everything else white: pure white
 * captions. `enclosed240`: the same, but only bright regions enclosed by darker pixels and
 * letter-sized (enclosed.ts), which keeps white letters and drops a white sky behind them.
 * `enclosed200`: the same from 200 after a 5x5 median (which turns a photo's grain into flat
 * areas), for off-white or yellow text that JPEG has darkened. `dark`: pixels below 128 (after
 * the median) become black, for dark text on a light bar.
 */
export type Variant = "white240" | "enclosed240" | "enclosed200" | "dark";

/** A picture for the engine: a binary PGM, and the enclosed-region threshold if it needs one. */
export interface Picture {
  pgm: Uint8Array;
  enclosed?: number;
}

const RECIPE: Record<Variant, { median: number; threshold?: number; enclosed?: number }> = {
  white240: { median: 0, threshold: 240 },
  enclosed240: { median: 0, enclosed: 240 },
  enclosed200: { median: 5, enclosed: 200 },
  dark: { median: 5, threshold: 128 },
};

/** How the image is scaled and cut before recognition. */
export interface PreprocessOptions {
  /** Wider images are scaled down to this width: captions stay legible, the engine is faster. */
  maxWidth?: number;
  /** Narrower images are scaled up to this width: small text reads better larger. */
  minWidth?: number;
  /** Refused above this many input pixels (the board's MAX_IMAGE_PIXELS). */
  maxPixels?: number;
  /** Fraction of the height read at the top and at the bottom. */
  band?: number;
}

/**
 * Decodes `bytes` (frame 0 of an animation, EXIF orientation applied, transparency flattened on
 * mid grey so that white and black text both stay visible), scales it, and cuts the top and
 * bottom bands (one band when the image is too short for two).
 */
export async function captionBands(
  bytes: Uint8Array,
  options: PreprocessOptions = {},
): Promise<Band[]> {
  const { maxWidth = 1024, minWidth = 800, maxPixels = 50_000_000, band = 1 / 3 } = options;
  const open = () => sharp(bytes, { limitInputPixels: maxPixels, failOn: "none" });
  const meta = await open().metadata();
  const turned = (meta.orientation ?? 1) >= 5;
  const w0 = (turned ? meta.height : meta.width) ?? 0;
  const h0 = (turned ? meta.width : meta.pageHeight ?? meta.height) ?? 0;
  if (w0 < 1 || h0 < 1) throw new Error("Image has no pixels");
  // A tall strip would otherwise become a very tall picture: its height is capped too.
  const scale = Math.min(Math.max(minWidth, Math.min(maxWidth, w0)) / w0, 2 * maxWidth / h0);
  const { data, info } = await open()
    .rotate()
    .flatten({ background: "#808080" })
    .resize(Math.max(1, Math.round(w0 * scale)), Math.max(1, Math.round(h0 * scale)), {
      fit: "fill",
      kernel: scale > 1 ? "cubic" : "lanczos3",
    })
    .greyscale()
    .raw()
    .toBuffer({ resolveWithObject: true });
  const { width, height } = info;
  const pixels = new Uint8Array(data.buffer, data.byteOffset, data.length);
  const h = Math.max(1, Math.min(height, Math.round(height * band)));
  const cut = (name: Band["name"], top: number): Band => ({
    name,
    width,
    height: h,
    pixels: pixels.subarray(top * width, (top + h) * width),
  });
  return 2 * h <= height ? [cut("top", 0), cut("bottom", height - h)] : [cut("top", 0)];
}

/** A P5 header and the pixels, one byte each: the engine decodes it without a codec. */
function pgm(pixels: Uint8Array, width: number, height: number): Uint8Array {
  const header = new TextEncoder().encode(`P5\n${width} ${height}\n255\n`);
  const out = new Uint8Array(header.length + pixels.length);
  out.set(header);
  out.set(pixels, header.length);
  return out;
}

/**
 * The band as the engine reads it in `variant`: thresholded here (dark text on white, except a
 * dark bar's text, which Tesseract inverts itself), or greyscale with the threshold for the
 * enclosed-region filter, which runs in the engine's thread.
 */
export async function variantImage(band: Band, variant: Variant): Promise<Picture> {
  const recipe = RECIPE[variant];
  if (!recipe.median && recipe.enclosed) {
    return { pgm: pgm(band.pixels, band.width, band.height), enclosed: recipe.enclosed };
  }
  let img = sharp(band.pixels, { raw: { width: band.width, height: band.height, channels: 1 } });
  if (recipe.median) img = img.median(recipe.median);
  if (recipe.threshold) img = img.threshold(recipe.threshold);
  // negate() inverts an alpha channel too by default; there is none, and alpha: false says so.
  if (variant === "white240") img = img.negate({ alpha: false });
  // Raw single-channel input is written back as three channels unless told otherwise.
  const out = await img.toColourspace("b-w").raw().toBuffer();
  const pixels = new Uint8Array(out.buffer, out.byteOffset, out.length);
  return { pgm: pgm(pixels, band.width, band.height), enclosed: recipe.enclosed };
}

/**
 * The share of black pixels in a thresholded picture from variantImage() (white240: the band's
 * pixels of 240 or more), sampled every 7th pixel: well under a millisecond on the event loop.
 */
export function brightShare(picture: Picture, band: Band): number {
  const pgm = picture.pgm;
  const start = pgm.length - band.width * band.height;
  let black = 0, seen = 0;
  for (let i = pgm.length - 1; i >= start; i -= 7, seen++) if (pgm[i] === 0) black++;
  return seen ? black / seen : 0;
}

/**
 * Whether the engine would see one flat level in `picture`, and so read nothing: a thresholded
 * picture all of one value, or, for the enclosed-region filter, every pixel on the same side of
 * its threshold (no bright region, or one that touches every edge: enclosed.ts keeps neither).
 * A flat background, a blank bar or a band without a bright pixel costs no recognition
 * (read_bands_test.ts). Stops at the first pixel that differs; a whole band is a fraction of a ms.
 */
export function blank(picture: Picture): boolean {
  const pgm = picture.pgm;
  const start = pgmLayout(pgm)?.start;
  if (start === undefined || start >= pgm.length) return false;
  const cut = picture.enclosed;
  if (cut === undefined) {
    const first = pgm[start];
    for (let i = start + 1; i < pgm.length; i++) if (pgm[i] !== first) return false;
    return true;
  }
  const bright = pgm[start] >= cut;
  for (let i = start + 1; i < pgm.length; i++) if ((pgm[i] >= cut) !== bright) return false;
  return true;
}

/** The size of a PGM as pgm() writes it, and where its pixels start; null for anything else. */
function pgmLayout(image: Uint8Array): { width: number; height: number; start: number } | null {
  const text = new TextDecoder().decode(image.subarray(0, 32));
  const [, w, h] = text.match(/^P5\s+(\d+)\s+(\d+)\s+255\s/) ?? [];
  if (!w) return null;
  const width = Number(w), height = Number(h);
  const start = image.length - width * height;
  return start < 0 ? null : { width, height, start };
}

/** A PGM from variantImage() as PNG, to look at or to hand an engine that wants a file. */
export async function pgmToPng(image: Uint8Array): Promise<Uint8Array> {
  const layout = pgmLayout(image);
  if (!layout) throw new Error("not a PGM of variantImage()");
  const { width, height, start } = layout;
  const png = await sharp(Buffer.from(image.subarray(start)), {
    raw: { width, height, channels: 1 },
  }).png({ compressionLevel: 1 }).toBuffer();
  return new Uint8Array(png);
}
