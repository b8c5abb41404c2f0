/** Thumbnails for images that have none; used by `deno task thumbnails:backfill`. */
import type { Sql } from "../db/client.ts";
import type { Logger } from "../adapters/log.ts";
import type { Thumbnailer } from "./deps.ts";
import { originalKey, thumbnailKey } from "../domain/storage_keys.ts";
import { type ObjectStore, readAll } from "../adapters/storage/mod.ts";

/** Makes missing thumbnails one image at a time; returns how many were made and failed. */
export async function backfillThumbnails(
  sql: Sql,
  store: ObjectStore,
  thumbnails: Thumbnailer,
  log?: Logger,
): Promise<{ made: number; failed: number }> {
  let made = 0;
  const failed = new Set<string>();
  for (;;) {
    const done = await sql.begin(async (tx) => {
      const [row] = await tx<{ short_id: string }[]>`
        select short_id from images
        where thumbnail_key is null and not (short_id = any(${[...failed]}::text[]))
        order by seq limit 1 for update skip locked`;
      if (!row) return true;
      try {
        const original = await store.get(originalKey(row.short_id));
        if (!original) throw new Error("original object is missing");
        const thumb = await thumbnails.thumbnail(await readAll(original.body));
        const key = thumbnailKey(row.short_id);
        await store.put(key, thumb.data, {
          contentLength: thumb.data.length,
          contentType: "image/webp",
        });
        await tx`update images set thumbnail_key = ${key}
                 where short_id = ${row.short_id} and thumbnail_key is null`;
        made++;
      } catch (err) {
        failed.add(row.short_id);
        log?.warn("no thumbnail for this image", { short_id: row.short_id, err: String(err) });
      }
      return false;
    });
    if (done) return { made, failed: failed.size };
  }
}
