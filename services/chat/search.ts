/**
 * The search behind every chat integration (issue 43): one best match at a time, with a position
 * to ask for the next, and autocomplete choices. A query is searched by relevance (the library's
 * `sort=relevance`, db/relevance_search.ts): each word in the caption or the image's tags, the
 * phrase first. An empty query answers the most-sent images, newest among equals.
 */
import { retryRead, type Sql } from "../../db/client.ts";
import { listMostSent } from "../../db/sends.ts";
import type { ImageDto, ImagePage, ReadModel } from "../../domain/types.ts";
import { toImageDto } from "../read_model.ts";

/** Longest query a chat search reads (characters); the rest is ignored. */
export const MAX_CHAT_QUERY_CHARS = 60;

/** Most autocomplete choices (Discord's limit). */
export const MAX_CHOICES = 25;

/** Longest choice (Discord's limit on a choice's name and value). */
export const MAX_CHOICE_CHARS = 100;

/** One match and where the next one is (null: it was the last). */
export interface ChatMatch {
  image: ImageDto;
  /** An opaque position of at most 40 characters, for `findMatch(query, next)`. */
  next: string | null;
}

/** A page of matches and where the next page starts (null: there is none). */
export interface ChatMatches {
  images: ImageDto[];
  next: string | null;
}

/**
 * Counts a send of image `shortId` by `sender` (`discord:{user}`, ...), once per sender per day
 * (db/sends.ts recordSend).
 */
export type RecordSend = (shortId: string, sender: string) => Promise<unknown>;

/** How a chat search finds its images (see chatSearch). */
type Mode = "r" | "m";

/** `text` cut to `max` characters (code points), trimmed (services/chat/search_test.ts). */
export function clip(text: string, max: number): string {
  const trimmed = text.trim();
  // At most `max` UTF-16 units are at most `max` code points: most texts are not copied.
  if (trimmed.length <= max) return trimmed;
  let out = "";
  let n = 0;
  for (const ch of trimmed) {
    if (n++ === max) break;
    out += ch;
  }
  return out.trim();
}

/** One page of the most-sent images after `cursor` (a `{send_count}.{seq}` position). */
export type MostSent = (cursor: string | null, limit: number) => Promise<ImagePage>;

/** The most-sent listing over PostgreSQL (db/sends.ts), as API images. */
export function mostSentFrom(sql: Sql, publicBase: string | undefined): MostSent {
  return async (cursor, limit) => {
    const m = cursor === null ? null : /^(\d{1,10})\.(\d{1,19})$/.exec(cursor);
    if (cursor !== null && !m) return { items: [], next_cursor: null };
    const after = m ? { sendCount: Number(m[1]), seq: m[2] } : null;
    const rows = await retryRead(() => listMostSent(sql, after, limit + 1));
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map((r) => toImageDto(r, publicBase)),
      next_cursor: rows.length > limit ? `${last.send_count}.${last.seq}` : null,
    };
  };
}

/**
 * The chat search over `read`. A position is the mode (`r`: by relevance, `m`: the most sent, for
 * an empty query) followed by its listing's cursor.
 */
export function chatSearch(read: ReadModel, mostSent: MostSent) {
  const page = async (mode: Mode, query: string, cursor: string | null, limit: number) => {
    if (mode === "m") return await mostSent(cursor, limit);
    return await read.listImages({ tags: [], q: query, sort: "relevance", limit, cursor });
  };
  /**
   * Up to `limit` matches of `query` from `position` (null: the best), and the position after
   * them (null: there are no more). A malformed position is treated as the end.
   */
  const findMatches = async (
    query: string,
    position: string | null,
    limit: number,
  ): Promise<ChatMatches> => {
    const q = clip(query, MAX_CHAT_QUERY_CHARS);
    // An empty query answers the most-sent reactions.
    let mode: Mode = q ? "r" : "m";
    let cursor: string | null = null;
    if (position !== null) {
      const m = /^([rm])([A-Za-z0-9+/.]{1,39})$/.exec(position);
      if (!m) return { images: [], next: null };
      mode = m[1] as Mode;
      cursor = m[2];
    }
    const found = await page(mode, q, cursor, limit).catch((e) => {
      if ((e as { code?: string }).code === "bad_cursor") return null;
      throw e;
    });
    if (!found) return { images: [], next: null };
    return { images: found.items, next: found.next_cursor ? mode + found.next_cursor : null };
  };
  return {
    findMatches,

    /** The match of `query` at `position` (null: the best one), or null when there is none. */
    async findMatch(query: string, position: string | null): Promise<ChatMatch | null> {
      const { images, next } = await findMatches(query, position, 1);
      return images[0] ? { image: images[0], next } : null;
    },

    /**
     * Up to MAX_CHOICES phrases for what was typed: captions that carry its words, the last one as
     * a beginning (ReadModel.suggestCaptions), then the tags whose names or aliases start with it;
     * without text, the most used tags.
     */
    async suggest(typed: string): Promise<string[]> {
      const q = clip(typed, MAX_CHAT_QUERY_CHARS);
      const choices = new Set<string>();
      const add = (text: string | null | undefined) => {
        const phrase = clip((text ?? "").replace(/\s+/g, " ").toLowerCase(), MAX_CHOICE_CHARS);
        if (phrase && choices.size < MAX_CHOICES) choices.add(phrase);
      };
      if (!q) {
        const top = await read.listTags({ sort: "count_desc", limit: MAX_CHOICES, offset: 0 });
        for (const tag of top) add(tag.name.replaceAll("_", " "));
        return [...choices];
      }
      const [captions, tags] = await Promise.all([
        read.suggestCaptions(q, MAX_CHOICES),
        read.suggestTags(q.replace(/\s+/g, "_"), MAX_CHOICES),
      ]);
      for (const caption of captions) add(caption);
      for (const tag of tags) add((tag.alias ?? tag.name).replaceAll("_", " "));
      return [...choices];
    },
  };
}

/** The chat search of one read model. */
export type ChatSearch = ReturnType<typeof chatSearch>;
