/**
 * Removes objects recorded in pending_deletes: right after a delete, and on a timer. A sweep
 * leases a batch of due keys in one short statement, deletes the objects with no transaction or
 * pooled connection held, then clears or defers them. Replicas sweep side by side: a leased key
 * is not due for anyone else until its lease ends.
 */
import type { Sql } from "../db/client.ts";
import {
  clearDeletes,
  deferDeletes,
  forgetOwnedDeletes,
  leaseDueDeletes,
  releaseDeletes,
} from "../db/pending_deletes.ts";
import { isDatabaseUnavailable } from "../db/client.ts";
import type { Logger } from "../adapters/log.ts";
import {
  originalKey,
  previewKey,
  renditionKey,
  videoRenditionKey,
} from "../domain/storage_keys.ts";
import type { ObjectStore } from "../adapters/storage/mod.ts";

const BATCH = 50;
/** Deletes in flight at once within a batch. */
const CONCURRENCY = 8;
/**
 * How long a sweeper holds its batch: longer than the batch can take, even at S3's deadline per
 * delete (50 / 8 rounds of 15 s), so no other sweeper deletes the same key meanwhile.
 */
const LEASE_SECONDS = 300;
const INTERVAL_MS = 30_000;

/** Deletes `keys` a few at a time; after a failure, starts no more (storage is failing). */
async function deleteEach(store: ObjectStore, keys: string[], log?: Logger) {
  const done: string[] = [];
  const failed: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < keys.length && failed.length === 0) {
      const key = keys[next++];
      try {
        await store.delete(key);
        done.push(key);
      } catch (err) {
        failed.push(key);
        log?.warn("object delete failed; will retry", { key, err: String(err) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, keys.length) }, worker));
  return { done, failed, untried: keys.slice(next) };
}

/**
 * Deletes due objects until none is left or storage fails; returns how many were removed. A key
 * that failed waits its back-off (1 s, doubling, at most ten minutes).
 */
export async function sweepPendingDeletes(
  sql: Sql,
  store: ObjectStore,
  log?: Logger,
): Promise<number> {
  await forgetOwnedDeletes(sql);
  let removed = 0;
  for (;;) {
    const due = await leaseDueDeletes(sql, BATCH, LEASE_SECONDS);
    if (due.length === 0) return removed;
    const { done, failed, untried } = await deleteEach(store, due.map((d) => d.key), log);
    if (done.length) await clearDeletes(sql, done);
    if (failed.length) await deferDeletes(sql, failed);
    if (untried.length) await releaseDeletes(sql, untried);
    removed += done.length;
    if (failed.length || due.length < BATCH) return removed;
  }
}

/**
 * Deletes `keys` (already recorded in pending_deletes) right away and forgets the ones that
 * went; whatever fails stays recorded for the sweeper. Never throws: the row is already gone.
 */
export async function deleteObjectsNow(sql: Sql, store: ObjectStore, keys: string[], log?: Logger) {
  const results = await Promise.allSettled(keys.map((k) => store.delete(k)));
  const done = keys.filter((_, i) => results[i].status === "fulfilled");
  if (done.length < keys.length) {
    log?.warn("object delete deferred to the sweeper", {
      keys: keys.filter((k) => !done.includes(k)),
    });
  }
  try {
    if (done.length) await clearDeletes(sql, done);
  } catch (err) {
    // A record left behind only means one extra (harmless) delete later.
    if (!isDatabaseUnavailable(err)) log?.error("could not clear delete records", { err });
  }
}

/**
 * The objects an image row owns: its original, its thumbnail when it has one, and its JPEG
 * renditions (services/renditions.ts) and its MP4 (services/video_renditions.ts).
 */
export function objectKeysOf(row: { short_id: string; thumbnail_key: string | null }): string[] {
  // The JPEG renditions may not have been made: removing a missing object is no error.
  const renditions = [
    renditionKey(row.short_id, "preview"),
    renditionKey(row.short_id, "thumbnail"),
    videoRenditionKey(row.short_id),
    previewKey(row.short_id),
  ];
  return [originalKey(row.short_id), row.thumbnail_key, ...renditions].filter((k) => k !== null);
}

/**
 * Removes an image row and then its objects: `removeRow` deletes the row in a transaction that
 * records the keys `keysOf` gives in pending_deletes, and returns them (null when there was no
 * row); the objects are then deleted at once, or by the sweeper if storage fails. False when
 * there was no row. Delete and merge-into share it (tests/images_test.ts, tests/similar_test.ts).
 */
export async function removeRowAndObjects(
  services: { sql: Sql; store: ObjectStore; log?: Logger },
  removeRow: (keysOf: typeof objectKeysOf) => Promise<string[] | null>,
): Promise<boolean> {
  const keys = await removeRow(objectKeysOf);
  if (!keys) return false;
  await deleteObjectsNow(services.sql, services.store, keys, services.log);
  return true;
}

/**
 * Sweeps every `intervalMs` (from the end of one sweep to the start of the next) until the
 * returned function is called; that function resolves once a sweep under way has finished.
 */
export function startDeleteSweeper(
  sql: Sql,
  store: ObjectStore,
  log: Logger,
  intervalMs = INTERVAL_MS,
): () => Promise<void> {
  let stopped = false;
  let running = Promise.resolve();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = () => {
    running = sweepPendingDeletes(sql, store, log)
      .then(() => {}, (err) => log.warn("delete sweep failed", { err: String(err) }))
      .finally(() => {
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
  };
  timer = setTimeout(tick, intervalMs);
  return async () => {
    stopped = true;
    clearTimeout(timer);
    await running;
  };
}
