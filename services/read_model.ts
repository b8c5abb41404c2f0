/** The read side: database rows shaped into the API's JSON, for the API and the pages alike. */
import { databaseSnapshot, retryRead, type Sql } from "../db/client.ts";
import {
  getImageByShortId,
  type ImageWithTags,
  type ListedImages,
  listImages,
  listImagesByUploader,
  MAX_PAGE_ROWS,
} from "../db/images.ts";
import { userIdByName } from "../db/users.ts";
import {
  type CaptionCursor,
  type CaptionHit,
  searchImagesByCaption,
} from "../db/caption_search.ts";
import {
  type RelevanceCursor,
  type RelevanceLevel,
  searchByRelevance,
} from "../db/relevance_search.ts";
import { MAX_CANDIDATES_PER_WORD } from "../db/caption_search.ts";
import { queryWords, SIMILARITY_THRESHOLD, wordRuns } from "../domain/caption_text.ts";
import { knownTagNames, listTags, suggestTags } from "../db/tags.ts";
import { suggestCaptions } from "../db/caption_suggest.ts";
import { splitSearch } from "../domain/search_text.ts";
import { isShortId } from "../domain/short_id.ts";
import { SnapshotCache } from "../adapters/http/snapshot_cache.ts";
import { imageUrls, previewUrl, videoUrl } from "../domain/storage_keys.ts";
import { AppError } from "../domain/errors.ts";
import type {
  ImageDto,
  ImagePage,
  ListImagesQuery,
  ReadModel,
  TagDto,
  TagSuggestion,
} from "../domain/types.ts";

/** A cursor that cannot be read (`bad_cursor`: the API answers 422, a page 400). */
export class BadCursorError extends AppError {
  override name = "BadCursorError";
  constructor() {
    super("bad_cursor", "cursor: not a valid cursor");
  }
}

/** Most caption-search pages one page of a single uploader's search reads (searchByUploader). */
export const UPLOADER_SEARCH_ROUNDS = 5;

/** The opaque keyset cursor after `seq`. */
export function encodeCursor(seq: string): string {
  return btoa(`v1:${seq}`).replace(/=+$/, "");
}

/** The keyset position of a cursor, or BadCursorError. */
export function decodeCursor(cursor: string): string {
  const m = /^v1:(\d{1,18})$/.exec(cursorText(cursor));
  if (!m) throw new BadCursorError();
  return m[1];
}

/** The opaque cursor of a caption search after a hit of `level` at `seq`. */
export function encodeCaptionCursor(after: CaptionCursor): string {
  return btoa(`v2:${after.level}:${after.seq}`).replace(/=+$/, "");
}

/** The position of a caption search's cursor, or BadCursorError. */
export function decodeCaptionCursor(cursor: string): CaptionCursor {
  const m = /^v2:([12]):(\d{1,18})$/.exec(cursorText(cursor));
  if (!m) throw new BadCursorError();
  return { level: Number(m[1]) as 1 | 2, seq: m[2] };
}

function cursorText(cursor: string): string {
  try {
    return atob(cursor);
  } catch {
    throw new BadCursorError();
  }
}

/** The opaque cursor of a relevance search after a hit at this position. */
export function encodeRelevanceCursor(after: RelevanceCursor): string {
  return btoa(`v3:${after.level}:${after.sendCount}:${after.seq}`).replace(/=+$/, "");
}

/** The position of a relevance search's cursor, or BadCursorError. */
export function decodeRelevanceCursor(cursor: string): RelevanceCursor {
  const m = /^v3:([1-4]):(\d{1,10}):(\d{1,18})$/.exec(cursorText(cursor));
  if (!m) throw new BadCursorError();
  return { level: Number(m[1]) as RelevanceLevel, sendCount: Number(m[2]), seq: m[3] };
}

/** An image row as the API returns it. */
export function toImageDto(row: ImageWithTags, publicBase: string | undefined): ImageDto {
  return {
    short_id: row.short_id,
    hash: row.hash,
    content_type: row.content_type,
    size_bytes: row.size_bytes,
    width: row.width,
    height: row.height,
    thumbnail_key: row.thumbnail_key,
    tags: row.tags,
    ...imageUrls(publicBase, row),
    text: row.text,
    text_source: row.text_source,
    created_at: row.created_at.toISOString(),
    uploaded_by: row.uploaded_by,
    favorite_count: row.favorite_count,
    send_count: row.send_count,
    duration_seconds: row.duration_seconds,
    video_url: row.mp4_bytes === null ? null : videoUrl(publicBase, row.short_id),
    preview_url: row.preview_bytes === null ? null : previewUrl(publicBase, row.short_id),
  };
}

/**
 * The ReadModel over PostgreSQL. Up to `listingCacheEntries` image list pages, and as many tag
 * lists, are kept while the database has not changed: a page costs the database about 50 index
 * lookups for the images' tags, and the newest page, the popular tags' pages and the tag browser
 * are what everyone asks for. Each request still asks the database for its snapshot, so a list is
 * never older than a fresh query's.
 */
export function createReadModel(
  sql: Sql,
  publicBase: string | undefined,
  listingCacheEntries = 0,
  searchSql: Sql = sql,
  /** The bound of candidates one listing examines (db/images.ts MAX_EXAMINED; tests set less). */
  examine?: number,
): ReadModel {
  const snapshot = () => retryRead(() => databaseSnapshot(sql));
  const listings = new SnapshotCache<ImagePage>(listingCacheEntries, snapshot);
  const tagLists = new SnapshotCache<TagDto[]>(listingCacheEntries, snapshot);
  const suggestions = new SnapshotCache<TagSuggestion[]>(listingCacheEntries, snapshot);
  const captionChoices = new SnapshotCache<string[]>(listingCacheEntries, snapshot);
  /**
   * A caption search of one uploader's images: the search's pages, read in order and kept to that
   * uploader's images, until `limit` + 1 are found or UPLOADER_SEARCH_ROUNDS pages were read.
   * Then the page may be short, and its cursor is where the reading stopped.
   */
  const searchByUploader = async (
    q: ListImagesQuery,
    words: string[],
    cursor: string | null,
  ): Promise<ImagePage> => {
    const uploader = q.uploader!.toLowerCase();
    let at = cursor ? decodeCaptionCursor(cursor) : null;
    const hits: CaptionHit[] = [];
    for (let round = 0; round < UPLOADER_SEARCH_ROUNDS; round++) {
      const rows = await retryRead(() =>
        searchImagesByCaption(searchSql, {
          words,
          tags: q.tags,
          exclude: q.exclude ?? [],
          limit: MAX_PAGE_ROWS,
          after: at,
        })
      );
      for (const row of rows) {
        at = { level: row.level, seq: row.seq };
        if (row.uploaded_by?.toLowerCase() !== uploader) continue;
        hits.push(row);
        if (hits.length > q.limit) break;
      }
      if (hits.length > q.limit) {
        const last = hits[q.limit - 1];
        return {
          items: hits.slice(0, q.limit).map((r) => toImageDto(r, publicBase)),
          next_cursor: encodeCaptionCursor({ level: last.level, seq: last.seq }),
        };
      }
      if (rows.length < MAX_PAGE_ROWS) at = null;
      if (!at) break;
    }
    return {
      items: hits.map((r) => toImageDto(r, publicBase)),
      next_cursor: at ? encodeCaptionCursor(at) : null,
    };
  };
  const loadPage = async (
    q: ListImagesQuery,
    words: string[],
    cursor: string | null,
  ): Promise<ImagePage> => {
    const limit = q.limit;
    let uploaderId: string | null = null;
    if (q.uploader) {
      uploaderId = await retryRead(() => userIdByName(sql, q.uploader!));
      if (!uploaderId) return { items: [], next_cursor: null };
      if (words.length) return await searchByUploader(q, words, cursor);
    }
    const rows = await retryRead(async () => {
      // Aliases mean their targets in a filter too: the statements resolve them.
      const { tags } = q;
      const exclude = q.exclude ?? [];
      if (!words.length) {
        const beforeSeq = cursor ? decodeCursor(cursor) : null;
        if (uploaderId) {
          return await listImagesByUploader(sql, {
            uploaderId,
            tags,
            exclude,
            limit: limit + 1,
            beforeSeq,
          });
        }
        return await listImages(sql, { tags, exclude, limit: limit + 1, beforeSeq, examine });
      }
      const after = cursor ? decodeCaptionCursor(cursor) : null;
      return await searchImagesByCaption(searchSql, {
        words,
        tags,
        exclude,
        limit: limit + 1,
        after,
      });
    });
    const items = rows.slice(0, limit);
    const last = items[items.length - 1] as (typeof items)[number] & Partial<CaptionHit>;
    // A listing that stopped at its bound of candidates resumes below them, however few it found.
    const resume = (rows as Partial<ListedImages>).resume ?? null;
    return {
      items: items.map((r) => toImageDto(r, publicBase)),
      next_cursor: rows.length <= limit
        ? (resume === null ? null : encodeCursor(resume))
        : last.level
        ? encodeCaptionCursor({ level: last.level, seq: last.seq })
        : encodeCursor(last.seq),
    };
  };
  /** A page of the relevance order (`sort=relevance` with words). */
  const loadRelevant = async (
    q: ListImagesQuery,
    words: string[],
    after: RelevanceCursor | null,
  ): Promise<ImagePage> => {
    const rows = await retryRead(() =>
      searchByRelevance(searchSql, {
        words,
        phrase: q.q ?? "",
        tags: q.tags,
        exclude: q.exclude ?? [],
        limit: q.limit + 1,
        after,
        threshold: SIMILARITY_THRESHOLD,
        candidates: MAX_CANDIDATES_PER_WORD,
      })
    );
    const items = rows.slice(0, q.limit);
    const last = items[items.length - 1];
    return {
      items: items.map((r) => toImageDto(r, publicBase)),
      next_cursor: rows.length > q.limit
        ? encodeRelevanceCursor({ level: last.level, sendCount: last.send_count, seq: last.seq })
        : null,
    };
  };
  return {
    async listImages(q: ListImagesQuery): Promise<ImagePage> {
      const words = q.q ? queryWords(q.q) : [];
      const cursor = q.cursor ?? null;
      // One uploader's images keep the listing's order (its search walks the caption search).
      const relevant = q.sort === "relevance" && words.length > 0 && !q.uploader;
      // Decoded first: a bad cursor is refused before the cache is asked, and the page is kept
      // by its position, not by the cursor's spelling.
      const at = cursor
        ? (relevant
          ? decodeRelevanceCursor(cursor)
          : words.length
          ? decodeCaptionCursor(cursor)
          : decodeCursor(cursor))
        : null;
      const exclude = [...q.exclude ?? []].sort();
      const uploader = q.uploader?.toLowerCase() ?? null;
      const key = JSON.stringify([
        [...q.tags].sort(),
        exclude,
        words,
        q.limit,
        at,
        uploader,
        relevant ? q.q : null,
      ]);
      return await listings.get(
        key,
        () =>
          relevant
            ? loadRelevant(q, words, at as RelevanceCursor | null)
            : loadPage(q, words, cursor),
      );
    },
    async getImage(shortId: string) {
      if (!isShortId(shortId)) return null;
      const row = await retryRead(() => getImageByShortId(sql, shortId));
      return row ? toImageDto(row, publicBase) : null;
    },
    listTags: (q) =>
      tagLists.get(
        JSON.stringify([q.q ?? null, q.sort, q.min_count ?? null, q.limit, q.offset]),
        () => retryRead(() => listTags(sql, q)),
      ),
    splitSearch: (text) => splitSearch(text, (names) => retryRead(() => knownTagNames(sql, names))),
    suggestTags: (q, limit) => {
      const minus = q.startsWith("-") ? "-" : "";
      const text = q.slice(minus.length);
      if (!text) return Promise.resolve([]);
      return suggestions.get(JSON.stringify([q, limit]), async () => {
        const found = await retryRead(() => suggestTags(searchSql, text, limit));
        return found.map((s) => ({ ...s, name: minus + s.name }));
      });
    },
    suggestCaptions: (typed, limit) => {
      // The last word as a beginning (what is being typed), the others as a search matches them.
      const tokens = wordRuns(typed);
      const beginning = tokens.at(-1)?.slice(0, 64);
      if (!beginning) return Promise.resolve([]);
      const finished = queryWords(tokens.slice(0, -1).join(" "));
      return captionChoices.get(
        JSON.stringify([finished, beginning, limit]),
        () => retryRead(() => suggestCaptions(searchSql, { finished, typed: beginning, limit })),
      );
    },
  };
}
