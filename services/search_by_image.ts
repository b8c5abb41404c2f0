/**
 * Search by image (issue 44): the images on the board that look like a given one. The query image
 * is sniffed and size-checked like an upload, then decoded in the thumbnail worker pool (never on
 * the event loop), whose perceptual hash of it is looked up as `/images/{id}/similar` looks up a
 * stored one. Nothing of the query image is stored: no row, no object, no job.
 */
import { listImagesNearHash } from "../db/similar.ts";
import type { ImageWithTags } from "../db/images.ts";
import { AppError } from "../domain/errors.ts";
import { BusyError, TooManyPixelsError } from "./upload/ingest.ts";
import { sniffImage, UnsupportedImageError } from "../domain/image_sniff.ts";
import type { Services } from "./deps.ts";

/** What a search asks: how near, and how many. */
export interface ImageQuery {
  maxDistance: number;
  limit: number;
}

/** A match: an image on the board and how many bits its hash differs from the query's. */
export interface ImageMatch {
  image: ImageWithTags;
  distance: number;
}

/**
 * The images within `maxDistance` of `bytes`, nearest first. Refusals are AppErrors:
 * `unsupported_image` (not a sniffed type, or one the decoder cannot read), `too_many_pixels`,
 * `thumbnails_busy` (the pool's queue is full). A picture without structure (one colour) has no
 * hash and finds nothing.
 */
export async function searchByImage(
  services: Pick<Services, "sql" | "config" | "thumbnails">,
  bytes: Uint8Array,
  query: ImageQuery,
): Promise<ImageMatch[]> {
  const sniffed = sniffImage(bytes);
  if (!sniffed) {
    throw new UnsupportedImageError("The file is not a JPEG, PNG, GIF, WebP or AVIF image");
  }
  const max = services.config.MAX_IMAGE_PIXELS;
  if (sniffed.width * sniffed.height > max) {
    throw new TooManyPixelsError(sniffed.width, sniffed.height, max);
  }
  if (!services.thumbnails) throw new AppError("not_implemented", "Search by image is not here");
  let phash: bigint | null;
  try {
    ({ phash } = await services.thumbnails.thumbnail(bytes));
  } catch (err) {
    const name = (err as Error)?.name;
    if (name === "ThumbnailQueueFullError") {
      throw new BusyError("Too many images are being processed; try again shortly");
    }
    if (name === "ThumbnailFailedError" || name === "ThumbnailTimeoutError") {
      throw new AppError("unsupported_image", "The image could not be decoded", { cause: err });
    }
    throw err;
  }
  if (phash === null) return [];
  return await listImagesNearHash(services.sql, phash, query.maxDistance, query.limit);
}
