/**
 * The reading plan for one image, whatever the engine: each band is read in the first round of
 * variants, and in the next rounds only while no word is sure yet. Most captions are sure after
 * the first round; a band with nothing on it costs four recognitions at most (the dark variant
 * only runs on a bright band), and a variant that comes out one flat level (a plain background,
 * a blank bar) costs none. So an image costs at most eight, usually four.
 *
 * @module
 */
import { mergeReadings, type OcrWord, parseTsv } from "./ocr_words.ts";
import {
  type Band,
  blank,
  brightShare,
  type Picture,
  type Variant,
  variantImage,
} from "./preprocess.ts";

/** Reads one picture and answers Tesseract's TSV. */
export type RecognizeTsv = (picture: Picture) => Promise<string>;

/**
 * A band whose best word reaches this confidence is done; a band where none does after every
 * round has no caption. Caption words read well score 90-96; junk from a photo's texture rarely
 * passes 85 (bench/caption_quality.ts).
 */
export const SURE = 85;

/**
 * The dark variant only runs on a band that is at least this bright (share of pixels >= 240):
 * it reads a caption bar well and a photo badly and slowly, and a bar fills a good part of its
 * band.
 */
export const BAR_SHARE = 0.15;

/**
 * The variants, in rounds: every band gets the first round (both cheap, one good on any
 * background, the other where an outline is broken), the later ones only while no word is sure.
 */
export const PLAN: readonly (readonly Variant[])[] = [
  ["white240", "enclosed240"],
  ["enclosed200"],
  ["dark"],
];

/** Stops between recognitions when `signal` aborts (a recognition itself is stopped by the caller). */
export type Checkpoint = <T>(step: Promise<T>) => Promise<T>;

/**
 * The words of each band (top first), each band merged over the variants read, with
 * confidences: words below `floor` dropped, and bands without a word of SURE confidence.
 */
export async function readBands(
  bands: Band[],
  recognize: RecognizeTsv,
  floor: number,
  step: Checkpoint = (p) => p,
): Promise<(OcrWord & { band: number })[]> {
  const words: (OcrWord & { band: number })[] = [];
  for (const band of bands) {
    const readings: OcrWord[][] = [];
    let bright = 0;
    for (const round of PLAN) {
      for (const variant of round) {
        if (variant === "dark" && bright < BAR_SHARE) continue;
        const picture = await step(variantImage(band, variant));
        if (variant === "white240") bright = brightShare(picture, band);
        // One flat level has no ink for the engine to find: it is not asked (blank()).
        readings.push(blank(picture) ? [] : parseTsv(await step(recognize(picture))));
      }
      if (mergeReadings(readings, floor).some((w) => w.conf >= SURE)) break;
    }
    const merged = mergeReadings(readings, floor);
    // A band with no sure word is texture read as letters: on photos without text, 15 of 30
    // gave such words (confidence 40-84), and no caption band was lost (bench/caption_quality.ts).
    if (!merged.some((w) => w.conf >= SURE)) continue;
    words.push(...merged.map((w) => ({ ...w, band: bands.indexOf(band) })));
  }
  return words;
}
