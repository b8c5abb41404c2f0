/**
 * `deno task thumbnails:backfill`: makes thumbnails for images whose `thumbnail_key` is null
 * (from before thumbnails existed, or whose generation failed). Resumable and safe to run twice
 * or on several machines at once: each image is claimed with SKIP LOCKED and only updated while
 * it still has no thumbnail; an image that fails again is skipped for the rest of the run.
 */
import { loadConfig } from "../adapters/config.ts";
import { Logger } from "../adapters/log.ts";
import { openResources } from "../wiring/resources.ts";
import { backfillThumbnails } from "../services/thumbnail_backfill.ts";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";

const config = loadConfig();
const log = new Logger(config.LOG_LEVEL);
const resources = await openResources(config, log);
const pool = await ThumbnailPool.start({
  size: resources.config.THUMBNAIL_WORKERS,
  maxPixels: resources.config.MAX_IMAGE_PIXELS,
});
try {
  const result = await backfillThumbnails(resources.sql, resources.store, pool, log);
  log.info("thumbnail backfill done", { ...result });
} finally {
  pool.close();
  await resources.close();
}
