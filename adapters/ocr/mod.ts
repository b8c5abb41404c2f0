/**
 * Caption text: recognising the words printed on a reaction image, so that images can be
 * searched by them ("this is fine", "THUMBS UP").
 *
 * - CaptionReader (recognizer.ts): warm tesseract.js engines, each in an OCR process of its own
 *   at nice 19 that a time limit kills (engine.ts, ocr_process.ts, engine_thread.ts,
 *   ocr_worker.ts); one call per image, bounded time, never blocking the event loop.
 * - The pipeline under it, usable with another engine (bench/caption_quality.ts runs Debian's
 *   tesseract CLI through it): captionBands() and variantImage() (preprocess.ts), the
 *   enclosed-region filter (enclosed.ts), readBands() (read_bands.ts), parseTsv() and
 *   mergeReadings() (ocr_words.ts).
 *
 * Storing, queueing and searching the text live beside these: domain/caption_text.ts and services/captions/recognition.ts.
 *
 * @module
 */
export {
  CaptionReader,
  type CaptionReaderOptions,
  type CaptionText,
  CONFIDENCE_FLOOR,
} from "./recognizer.ts";
export { EngineCrashed } from "./engine.ts";
export { BAR_SHARE, PLAN, readBands, type RecognizeTsv, SURE } from "./read_bands.ts";
export {
  type Band,
  captionBands,
  pgmToPng,
  type Picture,
  type PreprocessOptions,
  type Variant,
  variantImage,
} from "./preprocess.ts";
export { enclosedBright, enclosedPgm } from "./enclosed.ts";
export { cleanWord, mergeReadings, type OcrWord, parseTsv } from "./ocr_words.ts";
