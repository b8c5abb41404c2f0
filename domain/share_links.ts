/**
 * The addresses meant for others: the image page `/i/{short_id}` and the direct link
 * `/{short_id}.{ext}`, with what a preview shows of an image. Pure functions with no Deno or
 * server imports: the islands bundle this file.
 */
import { thumbnailSize } from "./thumbnail_size.ts";
import { escapeHtml } from "./html_escape.ts";
import type { ImageDto } from "./types.ts";

/** The usual extension of each stored type (the only types an upload is stored as). */
export const EXTENSIONS: Readonly<Record<string, string>> = {
  "image/jpeg": "jpg",
  "image/png": "png",
  "image/gif": "gif",
  "image/webp": "webp",
  "image/avif": "avif",
  "video/mp4": "mp4",
  "video/webm": "webm",
};

/** Originals over this size are previewed by their thumbnail (chat clients give up on them). */
export const PREVIEW_MAX_BYTES = 8 * 1024 * 1024;

const DIRECT_NAME = /^([0-9A-Za-z]{8})\.([a-z0-9]{1,5})$/;
const PAGE_PATH = /^\/i\/([0-9A-Za-z]{8})\/?$/;

/** What a direct link names: a short ID and an extension (not yet checked against the image). */
export interface DirectName {
  shortId: string;
  ext: string;
}

/** The extension of a stored type; null for a type that is never stored. */
export function extensionOf(contentType: string): string | null {
  return EXTENSIONS[contentType] ?? null;
}

/** `{short_id}.{ext}` split in two, or null when it does not have that shape. */
export function parseDirectName(name: string): DirectName | null {
  const m = DIRECT_NAME.exec(name);
  return m ? { shortId: m[1], ext: m[2] } : null;
}

/** The direct link's path, `/{short_id}.{ext}`. */
export function directPath(image: Pick<ImageDto, "short_id" | "content_type">): string {
  return `/${image.short_id}.${extensionOf(image.content_type) ?? "bin"}`;
}

/** The image page's path, `/i/{short_id}`. */
export function pagePath(shortId: string): string {
  return `/i/${shortId}`;
}

/**
 * Which image a shared address names, when its path is an image page or a direct link (the host
 * is the caller's to check). `ext` is set for a direct link.
 */
export function shortIdOfPath(path: string): { shortId: string; ext?: string } | null {
  const page = PAGE_PATH.exec(path);
  if (page) return { shortId: page[1] };
  return parseDirectName(path.slice(1));
}

/** The picture a preview shows: the original, or its thumbnail when the original is too big. */
export interface PreviewImage {
  url: string;
  type: string;
  width: number;
  height: number;
}

/** Everything the share features say about one image, with absolute URLs on `origin`. */
export interface ShareLinks {
  /** The image page. */
  page: string;
  /** The original's bytes, on this service (`/{short_id}.{ext}`). */
  direct: string;
  preview: PreviewImage;
  /** The thumbnail, on this service. */
  thumbnail: PreviewImage;
  /** A video's original, or a GIF's MP4 once made (`og:video`); null for a still. */
  video: PreviewImage | null;
}

/** The stored types that move: each gets an MP4 rendition (services/video_renditions.ts). */
export const MOVING_TYPES = ["image/gif", "video/mp4", "video/webm"] as const;

/** Whether a stored type moves (a GIF of one frame counts: its frames are not counted). */
export function isMovingType(contentType: string): boolean {
  return (MOVING_TYPES as readonly string[]).includes(contentType);
}

/**
 * The library's badge of a moving image (`GIF`, `WebP`, `Video`), null for a still: an animated
 * WebP is known to move once its animated preview exists.
 */
export function movingBadge(
  image: Pick<ImageDto, "content_type" | "preview_url">,
): "GIF" | "WebP" | "Video" | null {
  if (image.content_type === "image/gif") return "GIF";
  if (image.content_type === "image/webp") return image.preview_url !== null ? "WebP" : null;
  return isMovingType(image.content_type) ? "Video" : null;
}

/**
 * Whether an image of this stored type may have an MP4 and an animated preview: a moving type, or
 * a WebP, which moves when it is animated (its header says so at upload; a still WebP has none).
 */
export function mayMove(contentType: string): boolean {
  return isMovingType(contentType) || contentType === "image/webp";
}

/**
 * An MP4 of `image` that chats play inline, on `origin`: its rendition once made (a GIF's or a
 * WebM's at the direct link `/{short_id}.mp4`), else an MP4 upload's original; null for a still,
 * or a GIF or a WebM whose MP4 is not made yet.
 */
export function playableMp4(
  origin: string,
  image: Pick<ImageDto, "short_id" | "content_type" | "video_url">,
): string | null {
  const original = image.content_type === "video/mp4";
  if (image.video_url !== null) {
    return original
      ? `${origin}/api/v1/images/${image.short_id}/video.mp4`
      : `${origin}/${image.short_id}.mp4`;
  }
  return original ? origin + directPath(image) : null;
}

/**
 * The link a chat message carries for `image`: its direct link, except a GIF too large for chat
 * clients to animate (over PREVIEW_MAX_BYTES) whose MP4 exists, which goes as that MP4: they play
 * it inline where they would show a still of the GIF.
 */
export function chatLink(
  origin: string,
  image: Pick<ImageDto, "short_id" | "content_type" | "size_bytes" | "video_url">,
): string {
  if (
    image.content_type === "image/gif" && image.video_url !== null &&
    image.size_bytes > PREVIEW_MAX_BYTES
  ) {
    return `${origin}/${image.short_id}.mp4`;
  }
  return origin + directPath(image);
}

/** Whether a stored type is a video (MP4 or WebM, issue 45). */
export function isVideoType(contentType: string): boolean {
  return contentType.startsWith("video/");
}

/** The share links of `image` on `origin` (scheme and host, no trailing slash). */
export function shareLinks(
  origin: string,
  image:
    & Pick<
      ImageDto,
      "short_id" | "content_type" | "width" | "height" | "size_bytes" | "thumbnail_key"
    >
    & Partial<Pick<ImageDto, "video_url">>,
): ShareLinks {
  const direct = origin + directPath(image);
  const original = { url: direct, type: image.content_type, ...sizeOf(image) };
  // With no thumbnail, the thumbnail route serves the original.
  const thumbnail = image.thumbnail_key === null ? original : {
    url: `${origin}/api/v1/images/${image.short_id}/thumbnail`,
    type: "image/webp",
    ...thumbnailSize(image.width, image.height),
  };
  // A video's preview picture is its poster; the video itself is og:video.
  const video = isVideoType(image.content_type);
  return {
    page: origin + pagePath(image.short_id),
    direct,
    preview: video || image.size_bytes > PREVIEW_MAX_BYTES ? thumbnail : original,
    thumbnail,
    // A GIF's MP4 once made: chat clients play it where they would show a frame of a large GIF.
    video: video
      ? original
      : image.video_url
      ? { url: `${origin}/${image.short_id}.mp4`, type: "video/mp4", ...sizeOf(image) }
      : null,
  };
}

function sizeOf(image: { width: number; height: number }) {
  return { width: image.width, height: image.height };
}

/** Markdown of an image: `![alt](url)`, brackets escaped and parentheses of the URL encoded. */
export function markdownOf(alt: string, url: string): string {
  const text = alt.replace(/[[\]\\]/g, "\\$&");
  return `![${text}](${url.replace(/\(/g, "%28").replace(/\)/g, "%29")})`;
}

/** An `<img>` snippet of an image, attribute values escaped. */
export function htmlOf(
  alt: string,
  url: string,
  size: { width: number; height: number },
): string {
  return `<img src="${escapeHtml(url)}" alt="${escapeHtml(alt)}" width="${size.width}" ` +
    `height="${size.height}">`;
}

/** Alt text of an image: its tags, or a neutral description. */
export function altText(image: Pick<ImageDto, "tags">): string {
  return image.tags.length ? image.tags.map((t) => t.name).join(", ") : "Untagged image";
}
