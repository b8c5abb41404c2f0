/**
 * Objects to remove from storage. A delete records its keys in the transaction that removes the
 * row; an upload records its keys (due later) before it writes them and clears them in the
 * transaction that inserts the row. Either way a sweep removes what no row owns, so an outage
 * or a crash never leaves an object without its row for good.
 */
import type postgres from "postgres";
import type { Sql } from "./client.ts";

/** Records `keys` for deletion after `delaySeconds` (an upload's guard against a crash). */
export async function scheduleDeletes(sql: Sql, keys: string[], delaySeconds: number) {
  await sql`insert into pending_deletes (key, next_attempt_at)
    select unnest(${keys}::text[]), now() + make_interval(secs => ${delaySeconds})
    on conflict (key) do nothing`;
}

/** Forgets `keys` (their row now owns them, or they are gone from storage). */
export async function clearDeletes(tx: postgres.TransactionSql | Sql, keys: string[]) {
  await tx`delete from pending_deletes where key = any(${keys}::text[])`;
}

/**
 * The statement that forgets `keys` if the image `shortId` exists, for an upload's insert
 * transaction to pipeline after its insert. Like every postgres.js query it runs when awaited.
 */
export function forgetKeysOf(tx: postgres.TransactionSql, shortId: string, keys: string[]) {
  return tx`delete from pending_deletes where key = any(${keys}::text[])
    and exists (select 1 from images where short_id = ${shortId})`;
}

/**
 * Claims up to `limit` due keys; other replicas skip the claimed ones. A key that an image row
 * owns after all (an upload whose commit reply was lost) is forgotten, never deleted: its
 * original, or the thumbnail its row names. A thumbnail key its row does not name (a put that
 * failed, maybe after it landed) is deleted.
 */
export async function claimDueDeletes(tx: postgres.TransactionSql, limit: number) {
  // The short ID a key belongs to (keys.ts: images/{id}, thumbnails/{id}.webp).
  await tx`delete from pending_deletes p where p.next_attempt_at <= now() and exists (
    select 1 from images i
    where i.short_id = substring(p.key from '^(?:images|thumbnails)/([0-9A-Za-z]{8})(?:[.]webp)?$')
      and (p.key = 'images/' || i.short_id or p.key = i.thumbnail_key))`;
  return await tx<{ key: string; attempts: number }[]>`
    select key, attempts from pending_deletes where next_attempt_at <= now()
    order by next_attempt_at limit ${limit} for update skip locked`;
}

/** Pushes a failed key's next attempt back, exponentially up to ten minutes. */
export async function deferDelete(tx: postgres.TransactionSql, key: string, attempts: number) {
  const delay = Math.min(600, 2 ** Math.min(attempts, 10));
  await tx`update pending_deletes set attempts = attempts + 1,
    next_attempt_at = now() + make_interval(secs => ${delay}) where key = ${key}`;
}
