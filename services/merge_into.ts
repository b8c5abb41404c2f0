/**
 * Merging a near-duplicate into another image: its tags (and its caption, when the other has
 * none) move over, then it is deleted with its objects, as a delete does (services/deleter.ts).
 * POST /images/{id}/merge-into/{other} calls it.
 */
import type { Sql } from "../db/client.ts";
import { mergeImageInto } from "../db/similar.ts";
import { removeRowAndObjects } from "./deleter.ts";
import type { Logger } from "../adapters/log.ts";
import { isShortId } from "../domain/short_id.ts";
import type { ObjectStore } from "../adapters/storage/mod.ts";

/**
 * Merges image `from` into image `into`; false when either does not exist. Refused with
 * `self_merge` when they are the same image and `too_many_tags` when `into` would pass 50 tags
 * (nothing changes then).
 */
export async function mergeImage(
  services: { sql: Sql; store: ObjectStore; log?: Logger },
  from: string,
  into: string,
): Promise<boolean> {
  if (!isShortId(from) || !isShortId(into)) return false;
  return await removeRowAndObjects(
    services,
    (keysOf) => mergeImageInto(services.sql, from, into, keysOf),
  );
}
