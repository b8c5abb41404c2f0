/**
 * The JPEG renditions chat clients fetch (issue 43; Telegram takes JPEG photos of at most 5 MB):
 * `preview` (longest side PREVIEW_MAX_SIDE) and `thumbnail` (THUMBNAIL_MAX_SIDE), a GIF's first
 * frame, a video's representative frame (its poster, issue 45). Each is made once, at its first request, by the thumbnail pool, and kept in storage at
 * renditionKey(); later requests, and the edge reader (which makes nothing), serve the stored one
 * (tests/renditions_test.ts, "made once"). Requests for one that is being made wait for it.
 */
import { readAll } from "../adapters/storage/mod.ts";
import { sniffVideo } from "../domain/image_sniff.ts";
import { AppError } from "../domain/errors.ts";
import { originalKey, renditionKey, type RenditionKind } from "../domain/storage_keys.ts";
import { PREVIEW_MAX_SIDE, THUMBNAIL_MAX_SIDE } from "../domain/thumbnail_size.ts";
import type { Services } from "./deps.ts";

/** The longest side of each rendition. */
export const RENDITION_MAX_SIDE: Record<RenditionKind, number> = {
  preview: PREVIEW_MAX_SIDE,
  thumbnail: THUMBNAIL_MAX_SIDE,
};

/** The renditions of one service: `bytes()` reads or makes one. */
export function renditions(services: Pick<Services, "store" | "thumbnails" | "video">) {
  const making = new Map<string, Promise<Uint8Array<ArrayBuffer> | null>>();

  const make = async (shortId: string, kind: RenditionKind, key: string) => {
    const jpeg = services.thumbnails!.jpeg!;
    const original = await services.store.get(originalKey(shortId));
    if (!original) return null;
    let input: Uint8Array = await readAll(original.body);
    const video = sniffVideo(input);
    if (video) {
      // No FFmpeg here: a video's rendition cannot be made (404, like a missing original).
      if (!services.video) return null;
      input = await services.video.frame(input, video.demuxer);
    }
    let made;
    try {
      made = await jpeg.call(services.thumbnails, input, RENDITION_MAX_SIDE[kind]);
    } catch (e) {
      if ((e as Error)?.name === "ThumbnailQueueFullError") {
        throw new AppError("thumbnails_busy", "Too many images are being processed; try again");
      }
      throw e;
    }
    await services.store.put(key, made.data, {
      contentLength: made.data.length,
      contentType: "image/jpeg",
    });
    // The pool's answer owns its buffer (transferred from the worker).
    return made.data as Uint8Array<ArrayBuffer>;
  };

  return {
    /**
     * The JPEG `kind` of image `shortId`: stored, or made now and stored. Null when its original
     * is gone, or when it was never made and this service makes none (the edge reader).
     */
    async bytes(shortId: string, kind: RenditionKind): Promise<Uint8Array<ArrayBuffer> | null> {
      const key = renditionKey(shortId, kind);
      // One lookup-or-make per key at a time, registered before its first await: a request that
      // came while another's lookup missed would otherwise make it a second time.
      let pending = making.get(key);
      if (!pending) {
        pending = (async () => {
          const stored = await services.store.get(key);
          if (stored) return await readAll(stored.body);
          if (!services.thumbnails?.jpeg) return null;
          return await make(shortId, kind, key);
        })().finally(() => making.delete(key));
        making.set(key, pending);
      }
      return await pending;
    },
  };
}
