/** Shapes shared by the API, the pages and the islands: exactly the JSON the API returns. */

/** A tag as the API returns it. */
export interface TagDto {
  name: string;
  image_count: number;
}

/** An autocomplete answer: a tag, and the alias the text matched when it matched one. */
export interface TagSuggestion extends TagDto {
  alias?: string;
}

/** An alias: a name that always means its target tag. */
export interface TagAliasDto {
  alias: string;
  target: string;
}

/** A tag and the tags it implies (adding it adds them). */
export interface TagImplicationDto {
  tag: string;
  implies: string[];
}

/**
 * An image as the API returns it (docs/api.md#images-and-tag-names); the internal UUID is never
 * exposed.
 */
export interface ImageDto {
  short_id: string;
  hash: string;
  content_type: string;
  size_bytes: number;
  width: number;
  height: number;
  thumbnail_key: string | null;
  tags: TagDto[];
  file_url: string;
  thumbnail_url: string;
  /** The words printed on the image; null until recognition has run ("" when it found none). */
  text: string | null;
  /** Who wrote `text`: recognition, or a person (then recognition never overwrites it). */
  text_source: "ocr" | "manual" | null;
  created_at: string;
  /** Who uploaded it; null for images from before accounts, and restored ones without one. */
  uploaded_by: string | null;
  /** How many accounts favourited it (kept by the write paths). */
  favorite_count: number;
  /**
   * How often it was sent from a chat or copied from its page by a signed-in person, each sender
   * counted once a day (issue 43, db/sends.ts).
   */
  send_count: number;
  /** A video's length in seconds (issue 45); null for a still image, a GIF or an animated WebP. */
  duration_seconds: number | null;
  /**
   * The MP4 rendition of a moving image (a GIF, an MP4 or a WebM: H.264, no sound), null until the
   * background job has made it and for stills (issue 45).
   */
  video_url: string | null;
  /**
   * The animated preview of a moving image (an animated WebP, at most 400 px and 6 s) that the
   * library plays on hover and focus; null until made and for stills (issue 45).
   */
  preview_url: string | null;
}

/** One page of the library, newest first. */
export interface ImagePage {
  items: ImageDto[];
  next_cursor: string | null;
}

/**
 * Query of the image list: images carrying all of `tags` and none of `exclude`, and with `q`, whose
 * caption has its words (exact matches first, then approximate ones).
 */
export interface ListImagesQuery {
  tags: string[];
  exclude?: string[];
  q?: string | null;
  /** Only the images this account uploaded (a username, any case). */
  uploader?: string | null;
  /**
   * `relevance`: with `q`, the best match first (db/relevance_search.ts); otherwise, and by
   * default, the listing's order.
   */
  sort?: "newest" | "relevance";
  limit: number;
  cursor?: string | null;
}

/** Query of the tag list. */
export interface ListTagsQuery {
  q?: string;
  sort: "count_desc" | "name";
  min_count?: number;
  limit: number;
  offset: number;
}

/** The read side, used by the API and by server-rendered pages alike. */
export interface ReadModel {
  listImages(query: ListImagesQuery): Promise<ImagePage>;
  getImage(shortId: string): Promise<ImageDto | null>;
  listTags(query: ListTagsQuery): Promise<TagDto[]>;
  /** Autocomplete (`GET /tags/suggest`); a leading `-` of `q` is kept on every name. */
  suggestTags(q: string, limit: number): Promise<TagSuggestion[]>;
  /**
   * Captions for a search being typed (the chat command's autocomplete): each finished word
   * exactly, the last one as a beginning (db/caption_suggest.ts).
   */
  suggestCaptions(typed: string, limit: number): Promise<string[]>;
  /** The library's search field split into tags and caption words (domain/search_text.ts). */
  splitSearch(text: string): Promise<{ tags: string[]; q: string }>;
}
