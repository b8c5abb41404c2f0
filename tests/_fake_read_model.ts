/** An in-memory ReadModel for page tests: same shapes and ordering rules as the real one. */
import type {
  ImageDto,
  ImagePage,
  ListImagesQuery,
  ListTagsQuery,
  ReadModel,
} from "../domain/types.ts";
import { AppError } from "../domain/errors.ts";
import { splitSearch } from "../domain/search_text.ts";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** A short ID derived from a number, for deterministic fixtures. */
export function fakeShortId(n: number): string {
  let id = "";
  for (let i = 0; i < 8; i++) {
    id = ALPHABET[n % 62] + id;
    n = Math.floor(n / 62);
  }
  return id;
}

/** An image fixture with proxy URLs, as the API returns them without a CDN. */
export function fakeImage(n: number, tags: string[] = [], over: Partial<ImageDto> = {}): ImageDto {
  const short_id = fakeShortId(n);
  return {
    short_id,
    hash: `hash${n}`,
    content_type: "image/png",
    size_bytes: 1000 + n,
    width: 640,
    height: 480,
    thumbnail_key: `thumbnails/${short_id}.webp`,
    tags: tags.map((name) => ({ name, image_count: 1 })),
    file_url: `/api/v1/images/${short_id}/file`,
    thumbnail_url: `/api/v1/images/${short_id}/thumbnail`,
    text: null,
    text_source: null,
    created_at: new Date(Date.UTC(2025, 0, 1) + n * 60_000).toISOString(),
    uploaded_by: null,
    favorite_count: 0,
    send_count: 0,
    duration_seconds: null,
    video_url: null,
    preview_url: null,
    ...over,
  };
}

/** A ReadModel over `images` (newest first by `created_at`); tag counts are computed. */
export function fakeReadModel(images: ImageDto[]): ReadModel & { images: ImageDto[] } {
  const sorted = () => [...images].sort((a, b) => b.created_at.localeCompare(a.created_at));
  return {
    images,
    listImages(query: ListImagesQuery): Promise<ImagePage> {
      const all = sorted().filter((img) =>
        query.tags.every((t) => img.tags.some((tag) => tag.name === t))
      );
      const start = query.cursor ? Number.parseInt(query.cursor, 36) : 0;
      if (Number.isNaN(start)) {
        // As services/read_model.ts's BadCursorError: the code is what the pages answer by.
        return Promise.reject(new AppError("bad_cursor", "cursor: not a valid cursor"));
      }
      const items = all.slice(start, start + query.limit);
      const end = start + items.length;
      return Promise.resolve({ items, next_cursor: end < all.length ? end.toString(36) : null });
    },
    getImage(shortId: string): Promise<ImageDto | null> {
      return Promise.resolve(images.find((img) => img.short_id === shortId) ?? null);
    },
    listTags(query: ListTagsQuery) {
      const counts = new Map<string, number>();
      for (const img of images) {
        for (const t of img.tags) counts.set(t.name, (counts.get(t.name) ?? 0) + 1);
      }
      const q = query.q?.toLowerCase();
      const tags = [...counts].map(([name, image_count]) => ({ name, image_count }))
        .filter((t) => !q || t.name.includes(q))
        .filter((t) => t.image_count >= (query.min_count ?? 0))
        .sort((a, b) =>
          query.sort === "count_desc"
            ? b.image_count - a.image_count || a.name.localeCompare(b.name)
            : a.name.localeCompare(b.name)
        );
      return Promise.resolve(tags.slice(query.offset, query.offset + query.limit));
    },
    splitSearch(text: string) {
      const known = new Set(images.flatMap((img) => img.tags.map((t) => t.name)));
      return splitSearch(
        text,
        (names) => Promise.resolve(new Set(names.filter((n) => known.has(n)))),
      );
    },
    async suggestTags(q: string, limit: number) {
      const all = await this.listTags({ q, sort: "count_desc", limit, offset: 0 });
      return all.filter((t) => t.name.startsWith(q)).concat(
        all.filter((t) => !t.name.startsWith(q)),
      );
    },
    suggestCaptions(typed: string, limit: number) {
      const last = typed.toLowerCase().split(/\s+/).at(-1) ?? "";
      const texts = sorted().map((img) => img.text).filter((t): t is string =>
        !!t && t.toLowerCase().split(/[^\p{L}\p{N}]+/u).some((w) => last && w.startsWith(last))
      );
      return Promise.resolve([...new Set(texts)].slice(0, limit));
    },
  };
}
