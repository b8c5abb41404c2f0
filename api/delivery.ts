/**
 * `GET`/`HEAD` `/images/{id}/file` and `/thumbnail`, and the direct links `/{short_id}.{ext}`
 * (the original, exactly as `/file`, when `ext` is its type's usual extension): bytes fetched from storage server-side, with
 * the stored type, an ETag, immutable caching and nosniff; 304 on a matching If-None-Match, 206
 * for a single byte range, 416 for an unsatisfiable one. Objects up to CACHED_OBJECT_BYTES are
 * kept in a DELIVERY_CACHE_MB memory cache once read whole; larger ones, and any whose length
 * storage did not give, stream, never buffered. A HEAD never reads the bytes.
 */
import { type Context, Hono } from "hono";
import { retryRead } from "../db/client.ts";
import { getImageForDelivery } from "../db/images.ts";
import type { Services } from "../services/deps.ts";
import { isShortId } from "../domain/short_id.ts";
import { extensionOf, EXTENSIONS, mayMove, parseDirectName } from "../domain/share_links.ts";
import {
  originalKey,
  previewKey,
  renditionKey,
  type RenditionKind,
  videoRenditionKey,
} from "../domain/storage_keys.ts";
import { renditions } from "../services/renditions.ts";
import { type ByteRange, readAll } from "../adapters/storage/mod.ts";
import { ByteCache } from "../adapters/http/mod.ts";
import type { AppEnv } from "./env.ts";
import { AppError, errorCode } from "../domain/errors.ts";
import { newRouter } from "./router.ts";
import { errorResponse, ShortIdParam } from "./schemas.ts";

const IMMUTABLE = "public, max-age=31536000, immutable";
/** The largest object the delivery cache holds: every thumbnail and most reaction images. */
export const CACHED_OBJECT_BYTES = 4 * 1024 * 1024;

/**
 * A single `bytes=` range against `size` (RFC 9110, section 14): null when there is none or it
 * is to be ignored (a syntactically invalid range such as `bytes=5-3`, several ranges, another
 * unit), "unsatisfiable" when it is well-formed but starts at or past the end (416).
 */
export function parseRange(
  header: string | undefined,
  size: number,
): ByteRange | "unsatisfiable" | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/i.exec(header.trim());
  if (!m || (m[1] === "" && m[2] === "")) return null;
  if (m[1] === "") {
    const suffix = Number(m[2]);
    if (suffix === 0 || size === 0) return "unsatisfiable";
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(m[1]);
  if (m[2] !== "" && Number(m[2]) < start) return null; // last-pos before first-pos: invalid
  if (start >= size) return "unsatisfiable";
  return { start, end: m[2] === "" ? size - 1 : Math.min(Number(m[2]), size - 1) };
}

function etagMatches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.trim() === "*" ||
    header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

/** An object's length without reading it: the cache's copy, or a HEAD to storage. */
async function storedLength(services: Services, cache: ByteCache, key: string) {
  const held = cache.get(key);
  if (held) return held.length;
  const info = await services.store.head(key);
  if (!info) throw new AppError("not_found", "Image not found");
  return info.size; // null when storage did not say
}

async function serve(
  c: Context<AppEnv>,
  services: Services,
  cache: ByteCache,
  which: "file" | "thumbnail" | "mp4" | "preview",
  id: string,
  /** A direct link's extension: the stored type's, or `mp4` for a GIF's or a WebM's MP4. */
  ext?: string,
) {
  const row = isShortId(id) ? await retryRead(() => getImageForDelivery(services.sql, id)) : null;
  if (row && ext === "mp4" && extensionOf(row.content_type) !== ext) which = "mp4";
  else if (!row || (ext !== undefined && extensionOf(row.content_type) !== ext)) {
    throw new AppError("not_found", "Image not found");
  }
  const mp4 = which === "mp4";
  const preview = which === "preview";
  if (mp4 || preview) {
    // A moving image's MP4 or animated preview (services/video_renditions.ts), once made.
    const what = mp4 ? "MP4" : "animated preview";
    const made = row && (mp4 ? row.mp4_bytes : row.preview_bytes) !== null;
    // A WebP without one is a still (an animated one's is made at once after its upload).
    if (!row || !mayMove(row.content_type) || (row.content_type === "image/webp" && !made)) {
      throw new AppError("not_found", `Image not found, or a still image (no ${what})`);
    }
    if (!made) {
      throw new AppError(
        "rendition_pending",
        `The ${what} of this image is being made; ` +
          (mp4 ? "the original is at /file meanwhile" : "its poster is at /thumbnail meanwhile"),
      );
    }
  }
  const thumb = which === "thumbnail" && row.thumbnail_key !== null;
  const key = thumb
    ? row.thumbnail_key!
    : mp4
    ? videoRenditionKey(id)
    : preview
    ? previewKey(id)
    : originalKey(id);
  const etag = `"${row.hash}${thumb ? "-thumb" : mp4 ? "-mp4" : preview ? "-preview" : ""}"`;
  const headers: Record<string, string> = {
    "ETag": etag,
    "Cache-Control": IMMUTABLE,
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Accept-Ranges": "bytes",
    // Only sniffed image types are ever stored; this is a second line of defence.
    "Content-Type": thumb || preview ? "image/webp" : mp4 ? "video/mp4" : row.content_type,
  };
  if (etagMatches(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);

  // The original's and the MP4's sizes are in the row; a thumbnail's is not (thumbnails are
  // small: always whole).
  const size = thumb ? null : mp4 ? row.mp4_bytes : preview ? row.preview_bytes : row.size_bytes;
  const range = size === null ? null : parseRange(c.req.header("range"), size);
  if (range === "unsatisfiable") {
    return c.body(null, 416, { ...headers, "Content-Range": `bytes */${size}` });
  }
  if (range) headers["Content-Range"] = `bytes ${range.start}-${range.end}/${size}`;
  const status = range ? 206 : 200;
  if (c.req.method === "HEAD") {
    // From metadata, never the bytes: the row, the cache, or a HEAD to storage.
    const length = range
      ? range.end - range.start + 1
      : size ?? await storedLength(services, cache, key);
    if (length !== null) headers["Content-Length"] = String(length);
    return c.body(null, status, headers);
  }

  const cached = cache.get(key);
  if (cached) {
    const part = range ? cached.subarray(range.start, range.end + 1) : cached;
    headers["Content-Length"] = String(part.length);
    return c.body(part, status, headers);
  }
  let obj;
  try {
    obj = await services.store.get(key, range ?? undefined);
  } catch (e) {
    // Storage found the range outside the object after all: the 416 of a range past the end.
    if (errorCode(e) !== "range_not_satisfiable") throw e;
    return c.body(null, 416, { ...headers, "Content-Range": `bytes */${size}` });
  }
  if (!obj) throw new AppError("not_found", "Image not found");
  // An answer without a length (chunked) is streamed as it comes, never read whole.
  if (obj.length !== null) headers["Content-Length"] = String(obj.length);
  if (!range && obj.length !== null && cache.accepts(obj.length)) {
    const bytes = await readAll(obj.body);
    cache.set(key, bytes);
    return c.body(bytes, 200, headers);
  }
  return c.body(obj.body, status, headers);
}

/**
 * A JPEG rendition (issue 43): made at its first request and kept (services/renditions.ts), then
 * served like a thumbnail: an ETag of its own, immutable caching, 304, the memory cache.
 */
async function serveRendition(
  c: Context<AppEnv>,
  services: Services,
  cache: ByteCache,
  made: ReturnType<typeof renditions>,
  id: string,
  kind: RenditionKind,
) {
  const row = isShortId(id) ? await retryRead(() => getImageForDelivery(services.sql, id)) : null;
  if (!row) throw new AppError("not_found", "Image not found");
  const etag = `"${row.hash}-${kind}-jpg"`;
  const headers: Record<string, string> = {
    "ETag": etag,
    "Cache-Control": IMMUTABLE,
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Content-Type": "image/jpeg",
  };
  if (etagMatches(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);
  const key = renditionKey(id, kind);
  const bytes = cache.get(key) ?? await made.bytes(id, kind);
  if (!bytes) throw new AppError("not_found", "Image not found");
  if (cache.accepts(bytes.length)) cache.set(key, bytes);
  headers["Content-Length"] = String(bytes.length);
  if (c.req.method === "HEAD") return c.body(null, 200, headers);
  return c.body(bytes, 200, headers);
}

/** A direct link's last path segment: a short ID, a dot and one of the stored types' extensions. */
const DIRECT_NAME = `[0-9A-Za-z]{8}\\.(?:${[...new Set(Object.values(EXTENSIONS))].join("|")})`;

/**
 * The byte routes: `api` (under `/api/v1`) and `direct`, the direct links at the root. Both share
 * one memory cache. A direct link that names no image falls through to the next handler (the
 * pages' not-found page), as any other unknown path outside `/api/`.
 */
export function deliveryRoutes(
  services: Services,
): { api: ReturnType<typeof newRouter>; direct: Hono<AppEnv> } {
  const app = newRouter();
  const cache = new ByteCache(services.config.DELIVERY_CACHE_MB * 1024 * 1024, CACHED_OBJECT_BYTES);
  const direct = new Hono<AppEnv>();
  direct.on(["GET", "HEAD"], `/:name{${DIRECT_NAME}}`, async (c, next) => {
    const { shortId, ext } = parseDirectName(c.req.param("name"))!;
    try {
      return await serve(c, services, cache, "file", shortId, ext);
    } catch (e) {
      if (errorCode(e) !== "not_found") throw e;
      await next();
    }
  });
  for (const which of ["file", "thumbnail"] as const) {
    app.openAPIRegistry.registerPath({
      method: "get",
      path: `/images/{id}/${which}`,
      operationId: which === "file" ? "getImageFile" : "getImageThumbnail",
      tags: ["images"],
      summary: which === "file"
        ? "The original bytes, through the service (from its memory cache or streamed from storage; Range and If-None-Match honoured)"
        : "The WebP thumbnail; the original when the image has none",
      request: { params: ShortIdParam },
      responses: {
        200: {
          description: "The bytes",
          content: { "image/*": { schema: { type: "string", format: "binary" } } },
        },
        206: { description: "A byte range" },
        304: { description: "Not modified" },
        404: errorResponse("No such image"),
        416: { description: "Range not satisfiable" },
        503: errorResponse("Storage unavailable"),
      },
    });
    app.on(
      ["GET", "HEAD"],
      `/images/:id/${which}`,
      (c) => serve(c, services, cache, which, c.req.param("id")),
    );
  }
  app.openAPIRegistry.registerPath({
    method: "get",
    path: "/images/{id}/video.mp4",
    operationId: "getImageVideoMp4",
    tags: ["images"],
    summary: "The MP4 of a moving image (GIF, animated WebP, MP4, WebM): H.264, no sound",
    description: "Made in the background after the upload; Range and If-None-Match honoured. " +
      "Also at the direct link `/{short_id}.mp4` of a GIF, an animated WebP or a WebM (an MP4's " +
      "is its original).",
    request: { params: ShortIdParam },
    responses: {
      200: {
        description: "The MP4",
        content: { "video/mp4": { schema: { type: "string", format: "binary" } } },
      },
      206: { description: "A byte range" },
      304: { description: "Not modified" },
      404: errorResponse(
        "No such image or a still (`not_found`), or its MP4 not made yet " +
          "(`code`: `rendition_pending`)",
      ),
      416: { description: "Range not satisfiable" },
      503: errorResponse("Storage unavailable"),
    },
  });
  app.on(
    ["GET", "HEAD"],
    "/images/:id/video.mp4",
    (c) => serve(c, services, cache, "mp4", c.req.param("id")),
  );
  app.openAPIRegistry.registerPath({
    method: "get",
    path: "/images/{id}/preview",
    operationId: "getImagePreview",
    tags: ["images"],
    summary: "The animated preview of a moving image: an animated WebP, at most 400 px and 6 s",
    description: "Made in the background with its MP4; the library plays it on hover and focus. " +
      "Range and If-None-Match honoured.",
    request: { params: ShortIdParam },
    responses: {
      200: {
        description: "The animated WebP",
        content: { "image/webp": { schema: { type: "string", format: "binary" } } },
      },
      206: { description: "A byte range" },
      304: { description: "Not modified" },
      404: errorResponse(
        "No such image or a still (`not_found`), or its preview not made yet " +
          "(`code`: `rendition_pending`)",
      ),
      416: { description: "Range not satisfiable" },
      503: errorResponse("Storage unavailable"),
    },
  });
  app.on(
    ["GET", "HEAD"],
    "/images/:id/preview",
    (c) => serve(c, services, cache, "preview", c.req.param("id")),
  );
  const made = renditions(services);
  for (const kind of ["preview", "thumbnail"] as const) {
    app.openAPIRegistry.registerPath({
      method: "get",
      path: `/images/{id}/${kind}.jpg`,
      operationId: kind === "preview" ? "getImagePreviewJpeg" : "getImageThumbnailJpeg",
      tags: ["images"],
      summary: kind === "preview"
        ? "A JPEG of the image, longest side at most 1280 px (a GIF's first frame), for chat clients"
        : "A JPEG thumbnail, longest side at most 400 px (a GIF's first frame), for chat clients",
      description: "Made at its first request and kept; If-None-Match honoured.",
      request: { params: ShortIdParam },
      responses: {
        200: {
          description: "The JPEG",
          content: { "image/jpeg": { schema: { type: "string", format: "binary" } } },
        },
        304: { description: "Not modified" },
        404: errorResponse("No such image, or (on the edge reader) a rendition not made yet"),
        503: errorResponse("Storage unavailable, or too many images being processed"),
      },
    });
    app.on(
      ["GET", "HEAD"],
      `/images/:id/${kind}.jpg`,
      (c) => serveRendition(c, services, cache, made, c.req.param("id"), kind),
    );
  }
  return { api: app, direct };
}
