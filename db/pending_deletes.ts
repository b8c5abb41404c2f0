/**
 * Objects to remove from storage. A delete records its keys in the transaction that removes the
 * row; an upload records its keys (due later) before it writes them and clears the ones its row
 * owns in the transaction that inserts the row. Either way a sweep removes what no row owns, so
 * an outage or a crash never leaves an object without its row for good.
 */
import type postgres from "postgres";
import type { Sql } from "./client.ts";

/** Records `keys` for deletion after `delaySeconds` (an upload's guard against a crash). */
export async function scheduleDeletes(sql: Sql, keys: string[], delaySeconds: number) {
  await sql`insert into pending_deletes (key, next_attempt_at)
    select unnest(${keys}::text[]), now() + make_interval(secs => ${delaySeconds})
    on conflict (key) do nothing`;
}

/**
 * Reserves a chosen short ID's `keys` like `scheduleDeletes`, but only when no image holds the
 * ID and no other upload or pending delete holds a key: true when all were reserved, else
 * nothing is kept. The second look at images runs after the insert (a new snapshot), so an image
 * committed while the insert waited on its keys is seen.
 */
export async function reserveShortIdKeys(
  sql: Sql,
  shortId: string,
  keys: string[],
  delaySeconds: number,
): Promise<boolean> {
  const taken = () => sql`select 1 from images where short_id = ${shortId}`;
  if ((await taken()).length > 0) return false;
  const reserved = await sql`insert into pending_deletes (key, next_attempt_at)
    select unnest(${keys}::text[]), now() + make_interval(secs => ${delaySeconds})
    on conflict (key) do nothing returning key`;
  const mine = reserved.map((r) => r.key as string);
  if (mine.length === keys.length && (await taken()).length === 0) return true;
  if (mine.length > 0) await clearDeletes(sql, mine);
  return false;
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
 * Forgets due keys that an image row owns after all (an upload whose commit reply was lost): its
 * original, or the thumbnail its row names. A thumbnail key its row does not name (a put that
 * failed, maybe after it landed) stays, to be deleted.
 */
export async function forgetOwnedDeletes(sql: Sql) {
  // The short ID a key belongs to (domain/storage_keys.ts: images/{id}, thumbnails/{id}.webp).
  await sql`delete from pending_deletes p where p.next_attempt_at <= now() and exists (
    select 1 from images i
    where i.short_id = substring(p.key from '^(?:images|thumbnails)/([0-9A-Za-z]{8})(?:[.]webp)?$')
      and (p.key = 'images/' || i.short_id or p.key = i.thumbnail_key))`;
}

/**
 * Leases up to `limit` due keys for `leaseSeconds`, in one statement that holds no transaction
 * afterwards: their next attempt moves past the lease, so no other sweeper takes them while
 * this one talks to storage (and `skip locked` keeps two leases from meeting on a row).
 */
export async function leaseDueDeletes(sql: Sql, limit: number, leaseSeconds: number) {
  return await sql<{ key: string; attempts: number }[]>`
    update pending_deletes p set next_attempt_at = now() + make_interval(secs => ${leaseSeconds})
    from (select key from pending_deletes where next_attempt_at <= now()
          order by next_attempt_at limit ${limit} for update skip locked) due
    where p.key = due.key
    returning p.key, p.attempts`;
}

/** Pushes failed keys' next attempt back, exponentially (1 s, 2 s, 4 s ...) up to ten minutes. */
export async function deferDeletes(sql: Sql, keys: string[]) {
  await sql`update pending_deletes set attempts = attempts + 1,
    next_attempt_at = now() + make_interval(secs => least(600, power(2, least(attempts, 10))))
    where key = any(${keys}::text[])`;
}

/** Ends the lease of keys that were not tried: they are due again at once. */
export async function releaseDeletes(sql: Sql, keys: string[]) {
  await sql`update pending_deletes set next_attempt_at = now() where key = any(${keys}::text[])`;
}
