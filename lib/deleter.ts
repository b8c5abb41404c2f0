/** Removes objects recorded in pending_deletes; run after each delete and on a timer. */
import type { Sql } from "../db/client.ts";
import { claimDueDeletes, clearDeletes, deferDelete } from "../db/pending_deletes.ts";
import { isDatabaseUnavailable } from "../db/client.ts";
import type { Logger } from "./log.ts";
import type { ObjectStore } from "./storage/mod.ts";

/** Deletes due objects; returns how many were removed. Failures are retried later. */
export async function sweepPendingDeletes(
  sql: Sql,
  store: ObjectStore,
  log?: Logger,
): Promise<number> {
  let removed = 0;
  for (;;) {
    const batch = await sql.begin(async (tx) => {
      const due = await claimDueDeletes(tx, 50);
      const done: string[] = [];
      for (const { key, attempts } of due) {
        try {
          await store.delete(key);
          done.push(key);
        } catch (err) {
          log?.warn("object delete failed; will retry", { key, attempts, err: String(err) });
          await deferDelete(tx, key, attempts);
        }
      }
      await clearDeletes(tx, done);
      return { claimed: due.length, done: done.length };
    });
    removed += batch.done;
    if (batch.claimed < 50 || batch.done === 0) return removed;
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

/** Runs a sweep every `intervalMs` until the returned stop function is called. */
export function startDeleteSweeper(sql: Sql, store: ObjectStore, log: Logger, intervalMs = 30_000) {
  let running = false;
  const timer = setInterval(async () => {
    if (running) return;
    running = true;
    try {
      await sweepPendingDeletes(sql, store, log);
    } catch (err) {
      log.warn("delete sweep failed", { err: String(err) });
    } finally {
      running = false;
    }
  }, intervalMs);
  return () => clearInterval(timer);
}
