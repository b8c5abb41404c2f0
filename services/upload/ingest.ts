/**
 * The upload pipeline, after the body has been read: sniff the type from the bytes, refuse
 * pixel bombs before anything decodes, hash, then either add the tags to the image that already
 * has this content or store the original and its thumbnail and write the row.
 *
 * Nothing is ever half-written: the keys are recorded in pending_deletes (due in an hour) before
 * the objects are written and cleared in the transaction that inserts the row, so a crash in
 * between is cleaned up by the sweeper; a storage failure writes no row; a database failure
 * removes the stored objects.
 */
import { addTagsByHash, getImageByHash, type ImageWithTags, insertImage } from "../../db/images.ts";
import { clearDeletes, reserveShortIdKeys, scheduleDeletes } from "../../db/pending_deletes.ts";
import type { CaptionSource } from "../../db/caption_words.ts";
import { isDatabaseUnavailable } from "../../db/client.ts";
import { sniffImage, UnsupportedImageError } from "../../domain/image_sniff.ts";
import type { Services, Thumbnailer } from "../deps.ts";
import { newShortId } from "../../domain/short_id.ts";
import { originalKey, thumbnailKey } from "../../domain/storage_keys.ts";
import { sha256Hex } from "../../domain/hash.ts";
import { similarForUpload, type SimilarRef } from "../similar/upload.ts";
import { AppError } from "../../domain/errors.ts";
import type { UploadState } from "./state.ts";
import { type ProbedVideo, probeVideo, videoThumbnail } from "./video.ts";

export { PUT_SLOT_WAIT_MS, PUT_SLOTS } from "./state.ts";

/** The header claims more pixels than MAX_IMAGE_PIXELS (`too_many_pixels`). */
export class TooManyPixelsError extends AppError {
  override name = "TooManyPixelsError";
  constructor(readonly width: number, readonly height: number, readonly max: number) {
    super(
      "too_many_pixels",
      `The image is ${width}x${height} pixels; at most ${max} pixels are allowed`,
      {
        fields: { max_pixels: max },
      },
    );
  }
}

/** The thumbnail queue is full: the service is saturated and the client should retry. */
export class BusyError extends AppError {
  override name = "BusyError";
  constructor(message: string) {
    super("thumbnails_busy", message);
  }
}

/** A restore asked for a short ID that another image (or an upload in flight) holds. */
export class ShortIdTakenError extends AppError {
  override name = "ShortIdTakenError";
  constructor(readonly shortId: string) {
    super("short_id_taken", `The short ID ${shortId} belongs to an image with other content`);
  }
}

/** What a restore may ask of a new image (its old short ID and creation date), and the hash. */
export interface IngestOptions {
  /** Honoured when free; ShortIdTakenError when another image holds it. */
  shortId?: string | null;
  createdAt?: Date | null;
  /** A restore's caption, stored with a new image (recognition then skips it). */
  caption?: { text: string; source: CaptionSource } | null;
  /**
   * The bytes' hex SHA-256, as the upload computed it while they streamed in
   * (api/upload_body.ts); without it the bytes are hashed here, in one go.
   */
  sha256?: string;
  /** The uploader's account ID (kept only when the image is new: the first uploader stays). */
  uploaderId?: string | null;
}

/** The outcome of an upload: a new image, or the existing one with the same content. */
export interface IngestResult {
  created: boolean;
  image: ImageWithTags;
  /** Near-duplicates already on the board (domain/similar.ts), nearest first. */
  similar: SimilarRef[];
}

type Sniffed = { type: string; width: number; height: number; video?: ProbedVideo };
type Thumbnail = Awaited<ReturnType<Thumbnailer["thumbnail"]>>;
/** What storing (or finding) the image gave: a new image carries its perceptual hash. */
type Stored = { created: boolean; image: ImageWithTags; phash: bigint | null };

/** How long an upload's keys stay reserved before the sweeper may collect them. */
const UPLOAD_GUARD_SECONDS = 3600;

/** The services of an upload, with the uploads' shared state. */
type Uploading = Services & { uploads: UploadState };

/** Ingests one uploaded file with its (normalised) tags. */
export async function ingestImage(
  services: Services,
  bytes: Uint8Array,
  tags: string[],
  options: IngestOptions = {},
): Promise<IngestResult> {
  const uploads = services.uploads;
  if (!uploads) throw new Error("ingestImage() needs services.uploads (wiring/service.ts)");
  using _ingesting = uploads.ingesting();
  return await ingest({ ...services, uploads }, bytes, tags, options);
}

async function ingest(
  services: Uploading,
  bytes: Uint8Array,
  tags: string[],
  options: IngestOptions,
): Promise<IngestResult> {
  // Aborted once this upload no longer needs its thumbnail: it is stored, refused, or its content
  // existed already.
  const unneeded = new AbortController();
  try {
    const still = sniffImage(bytes);
    // A video's poster run starts with its probe (B17's upload rows), stopped by `unneeded`.
    const video = still ? null : await probeVideo(services, bytes, unneeded.signal);
    const sniffed: Sniffed | null = still ?? (video && { ...video, video });
    if (!sniffed) {
      throw new UnsupportedImageError(
        "The file is not a JPEG, PNG, GIF, WebP or AVIF image, nor an MP4 or WebM video",
      );
    }
    const max = services.config.MAX_IMAGE_PIXELS;
    if (sniffed.width * sniffed.height > max) {
      throw new TooManyPixelsError(sniffed.width, sniffed.height, max);
    }
    // The thumbnail is the slowest step: start it before hashing and the database round trips
    // (bench B2). If the content turns out to exist already, a queued job is dropped; a running
    // one costs what uploading new content would have cost anyway. A video's is made from its
    // representative frame.
    const thumbnail = !services.thumbnails
      ? Promise.reject(new Error("no thumbnailer"))
      : video
      ? videoThumbnail(services, video, unneeded.signal)
      : services.thumbnails.thumbnail(bytes, unneeded.signal);
    thumbnail.catch(() => {}); // awaited only if this upload stores a new image
    const hash = options.sha256 ?? sha256Hex(bytes);
    const stored = await tagOrCreate(services, bytes, hash, tags, sniffed, thumbnail, options);
    const { created, image, phash } = stored;
    const similar = await similarForUpload(services.sql, image.short_id, phash, services.log);
    return { created, image, similar };
  } finally {
    unneeded.abort(new Error("the upload no longer needs this thumbnail"));
  }
}

/**
 * Adds the tags to the image with this content, or stores it as a new image, sharing the work
 * with uploads of the same bytes in flight in this process.
 */
async function tagOrCreate(
  services: Uploading,
  bytes: Uint8Array,
  hash: string,
  tags: string[],
  sniffed: Sniffed,
  thumbnail: Promise<Thumbnail>,
  options: IngestOptions,
): Promise<Stored> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const { inflight } = services.uploads;
    const pending = inflight.get(hash);
    if (pending) {
      await pending.catch(() => {});
    }
    const existing = await addTagsByHash(services.sql, hash, tags);
    if (existing) return { created: false, image: existing, phash: null };
    if (inflight.has(hash)) continue;
    const job = createImage(services, bytes, hash, sniffed, tags, thumbnail, options);
    inflight.set(hash, job);
    try {
      const result = await job;
      if (result) return result;
    } finally {
      inflight.delete(hash);
    }
    // Another replica inserted the same content first: ours was removed; take theirs.
  }
  const image = await getImageByHash(services.sql, hash);
  if (!image) throw new Error("upload lost a race three times");
  return { created: false, image, phash: null };
}

async function createImage(
  services: Uploading,
  bytes: Uint8Array,
  hash: string,
  sniffed: Sniffed,
  tags: string[],
  thumbnail: Promise<Thumbnail>,
  options: IngestOptions,
): Promise<Stored | null> {
  const { sql, store, log } = services;
  const shortId = options.shortId ?? newShortId();
  const keys = [originalKey(shortId), thumbnailKey(shortId)];
  if (options.shortId) {
    // A chosen ID's keys may be another image's objects: they are written only once reserved.
    if (!await reserveShortIdKeys(sql, shortId, keys, UPLOAD_GUARD_SECONDS)) {
      throw new ShortIdTakenError(shortId);
    }
  } else {
    await scheduleDeletes(sql, keys, UPLOAD_GUARD_SECONDS);
  }

  // The pool copies what it hands to a worker, so `bytes` stays ours for the storage put.
  const [stored, thumb] = await Promise.allSettled([
    (async () => {
      using _slot = await services.uploads.putting.take();
      await store.put(keys[0], bytes, {
        contentLength: bytes.length,
        contentType: sniffed.type,
        sha256: hash,
      });
    })(),
    thumbnail,
  ]);
  const removeObjects = () =>
    Promise.allSettled(keys.map((k) => store.delete(k))).then(async (r) => {
      if (r.every((x) => x.status === "fulfilled")) await clearDeletes(sql, keys).catch(() => {});
    });
  if (stored.status === "rejected") {
    // A failed put may still land (one that ran out of time says nothing of the outcome): the
    // keys stay recorded, and the sweeper removes whatever arrived once their guard passes.
    throw stored.reason;
  }
  if (thumb.status === "rejected" && (thumb.reason as Error)?.name === "ThumbnailQueueFullError") {
    await removeObjects();
    throw new BusyError("Too many uploads are being processed; try again shortly");
  }

  // Stored before the row's transaction, not while it runs: a transaction waiting on S3 would
  // hold a pooled connection and the tag-count row locks other uploads need.
  let thumbKey: string | null = null;
  // The keys the row's transaction forgets: a thumbnail whose put failed may still land, so its
  // key stays recorded for the sweeper.
  let owned = keys;
  if (thumb.status === "fulfilled") {
    try {
      const data = thumb.value.data;
      await store.put(keys[1], data, { contentLength: data.length, contentType: "image/webp" });
      thumbKey = keys[1];
    } catch (err) {
      owned = [keys[0]];
      log.warn("thumbnail not stored; the image is kept without one", { err: String(err) });
    }
  } else {
    log.warn("thumbnail generation failed; the image is kept without one", {
      err: String(thumb.reason),
    });
  }

  let image: ImageWithTags | null;
  try {
    image = await insertImage(
      sql,
      {
        shortId,
        hash,
        contentType: sniffed.type,
        sizeBytes: bytes.length,
        width: sniffed.width,
        height: sniffed.height,
        thumbnailKey: thumbKey,
        createdAt: options.createdAt ?? null,
        caption: options.caption ?? null,
        phash: thumb.status === "fulfilled" ? thumb.value.phash : null,
        uploadedBy: options.uploaderId ?? null,
        durationSeconds: sniffed.video?.duration ?? null,
      },
      tags,
      owned,
    );
  } catch (err) {
    // A lost connection leaves the outcome unknown: the row may have committed. The objects then
    // stay; if the row did not commit, the keys are still in pending_deletes and the sweeper
    // (which never removes an object a row owns) collects them. Any other failure rolled back.
    if (!isDatabaseUnavailable(err)) await removeObjects();
    throw err;
  }
  if (!image) {
    await removeObjects();
    return null;
  }
  return {
    created: true,
    image,
    phash: thumb.status === "fulfilled" ? thumb.value.phash : null,
  };
}
