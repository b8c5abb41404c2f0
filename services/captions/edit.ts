/**
 * A person's word on an image's caption: writing it (recognition never overwrites it), or
 * handing it back to recognition, which reads it again. PATCH /images/{id} calls these.
 */
import { clearImageCaption, setImageCaption } from "../../db/captions.ts";
import type { Services } from "../deps.ts";
import { isShortId } from "../../domain/short_id.ts";
import { queueRecognition } from "./recognition.ts";
import type { ImageDto, ReadModel } from "../../domain/types.ts";

/**
 * Stores `text` (already normalised, domain/caption_text.ts) as image `shortId`'s manual
 * caption and returns the image; null when there is no such image.
 */
export async function writeCaption(
  services: Pick<Services, "sql">,
  read: ReadModel,
  shortId: string,
  text: string,
): Promise<ImageDto | null> {
  if (!isShortId(shortId) || !await setImageCaption(services.sql, shortId, text, "manual")) {
    return null;
  }
  return await read.getImage(shortId);
}

/**
 * Clears image `shortId`'s caption and sends its recognition job; returns the image as cleared,
 * or null when there is no such image. The image is read before the job is sent, which could
 * otherwise have written its reading already; the job is sent whatever the read does
 * (tests/captions_test.ts, "PATCH text: null gives the caption back to recognition").
 */
export async function clearCaption(
  services: Services,
  read: ReadModel,
  shortId: string,
): Promise<ImageDto | null> {
  if (!isShortId(shortId) || !await clearImageCaption(services.sql, shortId)) return null;
  try {
    return await read.getImage(shortId);
  } finally {
    await queueRecognition(services, shortId);
  }
}
