/**
 * Hashes for images that have none (uploaded before issue 22, or whose thumbnail failed), as a
 * chain of durable jobs (adapters/jobs): each job hashes a batch of images after a `seq` cursor, in
 * the thumbnail pool, and sends the job for the next batch. A crash retries the same batch (a
 * stored hash is never overwritten); an image that cannot be hashed is logged and passed, so the
 * chain always ends. `deno task similar:backfill` starts a chain; every replica works it.
 */
import { isDatabaseUnavailable, type Sql } from "../../db/client.ts";
import { recordImageHash } from "../../db/similar.ts";
import type { JobKind, JobQueue } from "../../adapters/jobs/mod.ts";
import type { Logger } from "../../adapters/log.ts";
import type { Thumbnailer } from "../deps.ts";
import { originalKey } from "../../domain/storage_keys.ts";
import { type ObjectStore, readAll, StorageError } from "../../adapters/storage/mod.ts";
import { DEFAULT_DISTANCE } from "../../domain/similar.ts";
import { FORMER_QUEUE_NAMES, SIMILAR_BACKFILL_QUEUE } from "../queues.ts";

/** One batch: the images without a hash whose `seq` is above `after`. */
export interface SimilarBackfillJob {
  after: string;
}

/** Images hashed per job. */
export const BACKFILL_BATCH = 50;

/** What a backfill job needs. */
export interface BackfillDeps {
  sql: Sql;
  store: ObjectStore;
  thumbnails: Thumbnailer;
  jobs: JobQueue;
  log: Logger;
}

/** Sends the first job of a chain (none when one is already waiting to start). */
export async function startSimilarBackfill(jobs: JobQueue): Promise<string | null> {
  await jobs.declare({ name: SIMILAR_BACKFILL_QUEUE });
  return await jobs.send(SIMILAR_BACKFILL_QUEUE, { after: "0" }, { key: "after-0" });
}

/** Hashes one batch; returns the cursor of the next, or null when the chain is done. */
export async function backfillBatch(deps: BackfillDeps, after: string): Promise<string | null> {
  const { sql, store, thumbnails, log } = deps;
  // `images.seq`: a bare `seq` in ORDER BY would sort by the text alias ("10" before "2").
  const rows = await sql<{ short_id: string; seq: string }[]>`
    select short_id, seq::text as seq from images
    where phash is null and seq > ${after}::bigint
    order by images.seq limit ${BACKFILL_BATCH}`;
  for (const row of rows) {
    try {
      const original = await store.get(originalKey(row.short_id));
      if (!original) throw new Error("original object is missing");
      const { phash } = await thumbnails.thumbnail(await readAll(original.body));
      // A plain picture has no hash (adapters/thumbnails/pixels.ts); the cursor moves past it.
      if (phash !== null) await recordImageHash(sql, row.short_id, phash, DEFAULT_DISTANCE, 0);
    } catch (err) {
      // Storage or the database down: the whole job fails and is retried from `after`.
      if (err instanceof StorageError || isDatabaseUnavailable(err)) throw err;
      log.warn("no perceptual hash for this image", { short_id: row.short_id, err });
    }
  }
  return rows.length === BACKFILL_BATCH ? rows[rows.length - 1].seq : null;
}

/** The job kind the service works: a batch, then the next batch's job. */
export function similarBackfillKind(deps: BackfillDeps): JobKind<SimilarBackfillJob> {
  return {
    name: SIMILAR_BACKFILL_QUEUE,
    formerNames: FORMER_QUEUE_NAMES[SIMILAR_BACKFILL_QUEUE],
    handler: async (job) => {
      const next = await backfillBatch(deps, job.data.after);
      if (next !== null) {
        await deps.jobs.send(SIMILAR_BACKFILL_QUEUE, { after: next }, { key: `after-${next}` });
      } else deps.log.info("perceptual hash backfill done");
    },
  };
}
