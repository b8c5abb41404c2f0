/**
 * Tag names (docs/api.md#images-and-tag-names): trimmed, lower-cased, NFC-normalised, inner
 * whitespace runs become `_`; 1-64 characters; no commas, slashes or control characters, and no
 * leading `-` (in a filter it means "without"). The one normaliser of tag names: the API, the pages
 * and the islands (no Deno APIs here, so islands bundle it) all use it.
 */
import { AppError } from "./errors.ts";

/** Longest tag name, in characters. */
export const MAX_TAG_LENGTH = 64;

/** Longest tag search text (`q` of the tag list), in UTF-16 code units, on the API and the pages. */
export const MAX_TAG_QUERY_LENGTH = 64;

/** Most tags one image may carry (a bound on every write that adds tags). */
export const MAX_TAGS_PER_IMAGE = 50;

/** More than MAX_TAGS_PER_IMAGE tags, in a request or on an image (`too_many_tags`, 422). */
export class TooManyTagsError extends AppError {
  override name = "TooManyTagsError";
  constructor(message: string) {
    super("too_many_tags", message, { fields: { max_tags: MAX_TAGS_PER_IMAGE } });
  }
}

/** A tag name that cannot be normalised into a valid one (`invalid_tag_name`). */
export class TagNameError extends AppError {
  override name = "TagNameError";
  constructor(message: string) {
    super("invalid_tag_name", message);
  }
}

// deno-lint-ignore no-control-regex
const FORBIDDEN = /[,/\\\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** The normal form of `raw`, or TagNameError explaining why it is not a tag name. */
export function normalizeTag(raw: string): string {
  const checked = checkTag(raw);
  if (checked.problem !== null) throw new TagNameError(checked.problem);
  return checked.name;
}

/**
 * The normal form of `raw`, or why it is not a tag name. It throws nothing, so a caller that only
 * drops bad names (parseFilterText, in the islands) bundles no error class.
 */
function checkTag(raw: string): { name: string; problem: null } | { problem: string } {
  const name = raw.normalize("NFC").trim().toLowerCase().replace(/\s+/g, "_");
  if (name === "") return { problem: "Tag names cannot be empty" };
  if ([...name].length > MAX_TAG_LENGTH) {
    return { problem: `Tag "${name.slice(0, 20)}…" is longer than ${MAX_TAG_LENGTH} characters` };
  }
  if (FORBIDDEN.test(name)) {
    return { problem: `Tag "${name}" contains a comma, slash or control character` };
  }
  if (name.startsWith("-")) {
    return { problem: `Tag "${name}" starts with "-", which means "without" in a filter` };
  }
  return { name, problem: null };
}

/**
 * Tags given as repeated values and/or comma-separated lists, normalised and de-duplicated in
 * order of first appearance. Empty items of a list ("a,,b") are skipped.
 */
export function parseTagList(values: readonly string[]): string[] {
  const out = new Set<string>();
  for (const value of values) {
    for (const part of value.split(",")) {
      if (part.trim() !== "") out.add(normalizeTag(part));
    }
  }
  if (out.size > MAX_TAGS_PER_IMAGE) {
    throw new TooManyTagsError(`At most ${MAX_TAGS_PER_IMAGE} tags are allowed`);
  }
  return [...out];
}

/** A tag filter: images carrying every `include` tag and none of the `exclude` tags. */
export interface TagFilter {
  include: string[];
  exclude: string[];
}

/**
 * A filter given as repeated values and/or comma-separated lists, where `-name` excludes a tag
 * (`happy,-sarcastic`). Both kinds count towards MAX_TAGS_PER_IMAGE; throws like parseTagList.
 */
export function parseTagFilter(values: readonly string[]): TagFilter {
  const include = new Set<string>();
  const exclude = new Set<string>();
  for (const value of values) {
    for (const part of value.split(",")) {
      const term = part.trim();
      if (term === "") continue;
      if (term.startsWith("-")) exclude.add(normalizeTag(term.slice(1)));
      else include.add(normalizeTag(term));
    }
  }
  if (include.size + exclude.size > MAX_TAGS_PER_IMAGE) {
    throw new TooManyTagsError(`A filter takes at most ${MAX_TAGS_PER_IMAGE} tags`);
  }
  return { include: [...include], exclude: [...exclude] };
}

/** A filter as its terms, exclusions written `-name`: what `?tags=` and the filter box show. */
export function filterTerms(filter: TagFilter): string[] {
  return [...filter.include, ...filter.exclude.map((t) => `-${t}`)];
}

/**
 * The terms of a comma-separated filter typed by a person, normalised, de-duplicated, keeping
 * `-` of exclusions; terms that can never name a tag are dropped instead of refused.
 */
export function parseFilterText(text: string | null | undefined): string[] {
  const terms = new Set<string>();
  for (const part of (text ?? "").split(",")) {
    const term = part.trim();
    const minus = term.startsWith("-") ? "-" : "";
    const checked = checkTag(term.slice(minus.length));
    // Not a tag name: left out of the filter.
    if (term && checked.problem === null) terms.add(minus + checked.name);
  }
  return [...terms];
}
