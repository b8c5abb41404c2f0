/**
 * Caption text and its words: what a caption may hold, and the words a search looks up. One
 * definition for the stored words (db/caption_words.ts) and a query's words, so that they always agree.
 */
import { AppError } from "./errors.ts";

/** Longest caption kept, recognised or written (the longest meme caption is a few lines). */
export const MAX_CAPTION_CHARS = 2000;

/** Longest caption search (`q`), like the tag search's `q`. */
export const MAX_QUERY_CHARS = 128;

/** Most distinct words stored per image: a page of small print is not a caption. */
export const MAX_WORDS_PER_IMAGE = 64;

/** Most words of a query that are matched; the rest are ignored. */
export const MAX_QUERY_WORDS = 8;

/**
 * Trigram similarity at or above which a dictionary word matches a query word approximately
 * (db/caption_search.ts; the search pool gives pg_trgm the same threshold, db/client.ts).
 * "facepralm" is 0.58 from "facepalm" (bench/caption_quality.ts has the figures behind the choice).
 */
export const SIMILARITY_THRESHOLD = 0.5;

/** A caption that is too long or not text (`caption_text_invalid`). */
export class CaptionTextError extends AppError {
  override name = "CaptionTextError";
  constructor(message: string) {
    super("caption_text_invalid", message);
  }
}

/**
 * A caption as stored: NFC, control characters other than line breaks removed, each line's
 * whitespace collapsed, trimmed; CaptionTextError when longer than MAX_CAPTION_CHARS.
 */
export function normalizeCaption(text: string): string {
  const lines = text.normalize("NFC").replace(/\r\n?/g, "\n").split("\n")
    // deno-lint-ignore no-control-regex
    .map((line) => line.replace(/[\u0000-\u001f\u007f]/g, " ").replace(/\s+/g, " ").trim());
  const out = lines.join("\n").replace(/\n{3,}/g, "\n\n").trim();
  if (out.length > MAX_CAPTION_CHARS) {
    throw new CaptionTextError(`text is longer than ${MAX_CAPTION_CHARS} characters`);
  }
  return out;
}

/**
 * Every run of letters and digits of a text, NFKC and lower-cased, in order, repeats kept (so
 * "I'M" gives "i" and "m", "*sips tea*" gives "sips" and "tea").
 */
export function wordRuns(text: string): string[] {
  return text.normalize("NFKC").toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** The distinct words of a text (wordRuns), in order of first appearance, at most `max`. */
export function wordsOf(text: string, max = MAX_WORDS_PER_IMAGE): string[] {
  const words = new Set<string>();
  for (const w of wordRuns(text)) {
    if (w.length > 64) continue; // not a word; the index keeps names under 64 characters too
    words.add(w);
    if (words.size === max) break;
  }
  return [...words];
}

/**
 * The words a search matches: those of three letters or more (shorter ones are mostly "is",
 * "a", "to", which recognition often drops, and trigram similarity cannot judge); a query of short
 * words only keeps them. At most MAX_QUERY_WORDS.
 */
export function queryWords(q: string): string[] {
  const all = wordsOf(q, 64);
  const long = all.filter((w) => [...w].length >= 3);
  return (long.length ? long : all).slice(0, MAX_QUERY_WORDS);
}
