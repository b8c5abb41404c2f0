/**
 * Background work: the durable job queue (queue.ts, on pg-boss) that every capability's
 * background jobs run from: applying tag implications, recognising captions, backfills.
 */
export {
  type FailedJob,
  type Job,
  type JobHandler,
  type JobKind,
  JobQueue,
  type QueueStats,
} from "./queue.ts";
