/**
 * Applying a tag's implications to the images that already carry it: in bounded batches, each a
 * short transaction (db/apply_implications.ts), run as a job of the durable queue
 * (adapters/jobs/) so that it survives a restart and runs on one replica. A job that dies half-way is
 * run again from the start: the batches already done add nothing the second time.
 */
import { applyImplicationsBatch } from "../../db/apply_implications.ts";
import type { Sql } from "../../db/client.ts";
import type { JobKind, JobQueue } from "../../adapters/jobs/mod.ts";
import type { Logger } from "../../adapters/log.ts";
import { TAG_IMPLICATIONS_QUEUE } from "../queues.ts";

/** Images per batch: one batch is one transaction of a few milliseconds. */
export const APPLY_BATCH = 500;

/** What applying one tag's implications did. */
export interface ApplyResult {
  images: number;
  added: number;
  skipped: number;
}

/**
 * Adds everything tag `tagId` implies to all of its images, newest first, `batch` images per
 * transaction, yielding to other work between batches.
 */
export async function applyImplications(
  sql: Sql,
  tagId: string,
  batch = APPLY_BATCH,
): Promise<ApplyResult> {
  const total: ApplyResult = { images: 0, added: 0, skipped: 0 };
  let before: string | null = null;
  do {
    const done = await applyImplicationsBatch(sql, tagId, before, batch);
    total.images += done.images;
    total.added += done.added;
    total.skipped += done.skipped;
    before = done.next;
    // Let requests waiting for a connection or the event loop go first.
    await new Promise((r) => setTimeout(r, 1));
  } while (before !== null);
  return total;
}

/** The job kind that applies implications; main.ts works it. */
export function implicationsJob(sql: Sql, log: Logger): JobKind<{ tagId: string }> {
  return {
    name: TAG_IMPLICATIONS_QUEUE,
    // A tag on a million images takes minutes; an attempt is taken up again only after this.
    expireInSeconds: 3600,
    handler: async (job) => {
      const result = await applyImplications(sql, job.data.tagId);
      if (result.skipped > 0) {
        log.warn("implied tags left off images that would pass 50 tags", {
          tag: job.data.tagId,
          ...result,
        });
      }
      log.info("implications applied", { tag: job.data.tagId, ...result });
    },
  };
}

/**
 * Has the implications of tag `tagId` applied in the background: as a job when the service has
 * a queue; otherwise (a test app, a tool), or when the job cannot be sent (the rule is already
 * committed), in this process, its failure logged.
 */
export async function scheduleImplications(
  services: { sql: Sql; log: Logger; jobs?: JobQueue },
  tagId: string,
): Promise<void> {
  if (services.jobs) {
    try {
      await services.jobs.send(TAG_IMPLICATIONS_QUEUE, { tagId });
      return;
    } catch (err) {
      services.log.warn("could not queue applying implications; applying them here", { err });
    }
  }
  applyImplications(services.sql, tagId).catch((err) =>
    services.log.error("applying implications failed", { tag: tagId, err })
  );
}
