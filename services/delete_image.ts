/**
 * Deleting an image: its row goes in one transaction that records its objects, then the objects
 * (services/deleter.ts). DELETE /images/{id} calls it.
 */
import type { Sql } from "../db/client.ts";
import { deleteImage as deleteImageRow } from "../db/images.ts";
import { removeRowAndObjects } from "./deleter.ts";
import type { Logger } from "../adapters/log.ts";
import { isShortId } from "../domain/short_id.ts";
import type { ObjectStore } from "../adapters/storage/mod.ts";

/** Deletes image `shortId` with its original and thumbnail; false when there is no such image. */
export async function deleteImage(
  services: { sql: Sql; store: ObjectStore; log?: Logger },
  shortId: string,
): Promise<boolean> {
  if (!isShortId(shortId)) return false;
  return await removeRowAndObjects(
    services,
    (keysOf) => deleteImageRow(services.sql, shortId, keysOf),
  );
}
