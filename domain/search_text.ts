/**
 * The library's one search field: tags and the words printed on images, typed together. Terms are
 * separated by commas; a term that names a tag (or an alias) filters by it, `-term` excludes a
 * tag, and anything else is searched in the captions. Inside a term that is not a tag, each word
 * that is a tag still filters by it: "happy this is fine" is the tag `happy` and the words "this
 * is fine".
 */
import { normalizeTag } from "./tag_names.ts";

/** A search split into a tag filter (`-name` excludes) and caption words. */
export interface SplitSearch {
  tags: string[];
  q: string;
}

/** A tag name's normal form, or null when the text cannot name a tag. */
function asTag(text: string): string | null {
  try {
    return normalizeTag(text);
  } catch {
    return null;
  }
}

/**
 * Splits `text`; `known` says which of the names it is given are tags or aliases (one lookup for
 * the whole search).
 */
export async function splitSearch(
  text: string,
  known: (names: string[]) => Promise<Set<string>>,
): Promise<SplitSearch> {
  const terms = text.split(",").map((t) => t.trim()).filter(Boolean);
  const candidates = new Set<string>();
  for (const term of terms) {
    if (term.startsWith("-")) continue;
    for (const part of [term, ...term.split(/\s+/)]) {
      const name = asTag(part);
      if (name) candidates.add(name);
    }
  }
  const isTag = await known([...candidates]);
  const filter: string[] = [];
  const words: string[] = [];
  for (const term of terms) {
    const minus = term.startsWith("-");
    const whole = asTag(minus ? term.slice(1) : term);
    if (minus) {
      if (whole) filter.push(`-${whole}`);
      continue;
    }
    if (whole && isTag.has(whole)) {
      filter.push(whole);
      continue;
    }
    for (const word of term.split(/\s+/)) {
      const name = asTag(word);
      if (name && isTag.has(name)) filter.push(name);
      else words.push(word);
    }
  }
  return { tags: [...new Set(filter)], q: words.join(" ") };
}
