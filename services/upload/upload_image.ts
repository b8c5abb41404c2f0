/**
 * An upload: the image stored (or found by its content, the tags added) by services/upload/ingest.ts,
 * then the work that follows a new image sent to the job queue: its caption's recognition,
 * unless the upload brought a caption. POST /images calls it.
 */
import { ingestImage, type IngestOptions, type IngestResult } from "./ingest.ts";
import type { Services } from "../deps.ts";
import { queueRecognition } from "../captions/recognition.ts";
import { queueVideoRendition } from "../video_renditions.ts";

/**
 * Stores `bytes` with `tags` (normalised) and queues the follow-up work of a new image. Refusals
 * are AppErrors of domain/errors.ts (`unsupported_image`, `too_many_pixels`, `short_id_taken`,
 * `too_many_tags`, `thumbnails_busy`).
 */
export async function uploadImage(
  services: Services,
  bytes: Uint8Array,
  tags: string[],
  options: IngestOptions = {},
): Promise<IngestResult> {
  const result = await ingestImage(services, bytes, tags, options);
  // Its caption is read in the background (adapters/ocr), never on the upload's path.
  if (result.created && !options.caption) await queueRecognition(services, result.image.short_id);
  // A moving image's MP4 is made in the background too (services/video_renditions.ts).
  if (result.created) await queueVideoRendition(services, result.image, bytes);
  return result;
}
