/**
 * The export format: `images/{short_id}.{ext}` (the originals, byte for byte), `manifest.jsonl`
 * (one image per line, newest first, as the API lists them) and `README.txt` (this description,
 * for whoever opens the folder without the board).
 */
import { z } from "zod";
import type { ImageDto } from "../../domain/types.ts";

/** One line of manifest.jsonl: the image's API fields, minus addresses, tags as names. */
export interface ManifestEntry {
  short_id: string;
  hash: string;
  content_type: string;
  size_bytes: number;
  width: number;
  height: number;
  tags: string[];
  created_at: string;
  /** The original's path inside the export folder. */
  file: string;
  [field: string]: unknown;
}

export const MANIFEST = "manifest.jsonl";
export const IMAGES_DIR = "images";

const EXTENSIONS: Record<string, string> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/avif": "avif",
  "video/mp4": "mp4",
  "video/webm": "webm",
};

/** The file name extension of a content type (`bin` for one the board does not know). */
export function extensionOf(contentType: string): string {
  return Object.hasOwn(EXTENSIONS, contentType) ? EXTENSIONS[contentType] : "bin";
}

/** What each checked field of a listed image must be, as a summary line says it. */
const RULES: Record<string, string> = {
  short_id: "8 base62 characters",
  hash: "64 lower-case hex digits",
  content_type: Object.keys(EXTENSIONS).join(", "),
  size_bytes: "a whole number of bytes",
  width: "a whole number of pixels",
  height: "a whole number of pixels",
  tags: "a list of named tags",
  created_at: "a date",
};

/**
 * An image of the board's listing as the export may use it: the fields that name a file or
 * decide what is written are exactly of the board's forms. A board is not trusted to send them
 * (a short ID of "../../x" would name a file outside the export folder); other fields travel
 * into the manifest as JSON.
 */
const LISTED_IMAGE = z.looseObject({
  short_id: z.string().regex(/^[0-9A-Za-z]{8}$/),
  hash: z.string().regex(/^[0-9a-f]{64}$/),
  content_type: z.enum(Object.keys(EXTENSIONS) as [string, ...string[]]),
  size_bytes: z.number().int().nonnegative(),
  width: z.number().int().nonnegative(),
  height: z.number().int().nonnegative(),
  tags: z.array(z.looseObject({ name: z.string() })),
  created_at: z.string(),
});

/** A value as a summary shows it: JSON (control characters escaped), at most 80 characters. */
function shown(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

/**
 * Why an item of the board's listing cannot be exported (the first bad field, its value and
 * what it must be), or null when it can (transfer_test.ts "an export refuses hostile listing
 * items").
 */
export function listedImageProblem(item: unknown): string | null {
  const parsed = LISTED_IMAGE.safeParse(item);
  if (parsed.success) return null;
  const field = parsed.error.issues[0]?.path[0];
  if (typeof field !== "string" || !(field in RULES)) return "not an image of the listing";
  const value = (item as Record<string, unknown>)[field];
  return value === undefined
    ? `${field} is missing (${RULES[field]})`
    : `${field} ${shown(value)} is not ${RULES[field]}`;
}

/**
 * Fields of the API's image that belong to one deployment, not to the image, or that the import
 * reads again from the bytes (a video's length).
 */
const NOT_EXPORTED = new Set([
  "duration_seconds",
  "video_url",
  "preview_url",
  "file_url",
  "thumbnail_url",
  "thumbnail_key",
  "favorite_count",
  "send_count",
]);

/**
 * The manifest line of an image: the documented fields first, then every other field the API
 * returns (so fields that later features add travel too), then the file's path.
 */
export function manifestEntry(image: ImageDto): ManifestEntry {
  const entry: ManifestEntry = {
    short_id: image.short_id,
    hash: image.hash,
    content_type: image.content_type,
    size_bytes: image.size_bytes,
    width: image.width,
    height: image.height,
    tags: image.tags.map((t) => t.name),
    created_at: image.created_at,
    file: `${IMAGES_DIR}/${image.short_id}.${extensionOf(image.content_type)}`,
  };
  for (const [key, value] of Object.entries(image)) {
    if (!(key in entry) && !NOT_EXPORTED.has(key)) entry[key] = value;
  }
  const { file, ...rest } = entry;
  return { ...rest, file } as ManifestEntry;
}

/**
 * A manifest line parsed and checked, or an Error saying what is wrong with it
 * (transfer_test.ts "parseManifestLine refuses a content_type that is not one of ours").
 */
export function parseManifestLine(line: string): ManifestEntry {
  const entry = JSON.parse(line) as ManifestEntry;
  const ok = typeof entry === "object" && entry !== null &&
    typeof entry.short_id === "string" && /^[0-9A-Za-z]{8}$/.test(entry.short_id) &&
    typeof entry.hash === "string" && /^[0-9a-f]{64}$/.test(entry.hash) &&
    // Sent as the upload's part header: one of ours, never a line break with more headers.
    typeof entry.content_type === "string" && Object.hasOwn(EXTENSIONS, entry.content_type) &&
    typeof entry.created_at === "string" && Array.isArray(entry.tags) &&
    entry.tags.every((t) => typeof t === "string") &&
    typeof entry.file === "string" && !entry.file.split("/").includes("..") &&
    !entry.file.startsWith("/");
  if (!ok) {
    throw new Error("not a manifest line (short_id, hash, content_type, created_at, tags, file)");
  }
  return entry;
}

/** README.txt of an export folder. */
export function exportReadme(source: string, date: string): string {
  return `Reaction board export
=====================

Exported from ${source} on ${date} by \`deno task export\`.

Contents
--------

images/{short_id}.{ext}
    Every original, byte for byte as it was uploaded. The extension follows the content
    type: jpg, png, gif, webp, avif.

manifest.jsonl
    One JSON object per line, one line per image, newest first (the board's listing order).
    Fields:
      short_id      the image's 8-character base62 identifier (its address: /i/{short_id})
      hash          SHA-256 of the original's bytes, lower-case hex
      content_type  image/jpeg, image/png, image/gif, image/webp or image/avif
      size_bytes    the original's size in bytes
      width, height the pixel size from the file's header
      tags          the tag names, sorted
      created_at    when the image was uploaded (RFC 3339, UTC, milliseconds)
      text          the words printed on the image: recognised, or written by a person;
                    null when not recognised yet ("" when none were found)
      text_source   "ocr" (recognised) or "manual" (written by a person); null with text
      uploaded_by   the username of who uploaded it; null for nobody known
      file          the original's path in this folder
    Any further fields are those the board's API returns for an image (features added after
    this format was written); a reader should keep fields it does not know.

README.txt
    This file.

Using it
--------

Check a file: sha256sum images/{short_id}.{ext} prints the line's "hash".

Restore into an empty board, with the same short IDs, dates, tags, caption text and uploaders
(an admin's sign-in or key; an uploader without an account there is kept as nobody):

    deno task import --restore <this folder> --url https://board.example

Running \`deno task export\` again into this folder brings it up to date: files already
present with the right hash are kept, the rest are downloaded, and the manifest is rewritten.
`;
}
