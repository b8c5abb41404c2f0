/**
 * Favourites (migration 015): one row per account and image, paged by `seq` (favourited order).
 * images.favorite_count follows from the favorites triggers, like tags' image_count.
 */
import { COLUMNS, type ImageWithTags, TAGS } from "./images.ts";
import type { Sql } from "./client.ts";

/** Favourites image `shortId` for account `userId` (kept as it was when already there). */
export async function putFavorite(sql: Sql, userId: string, shortId: string): Promise<boolean> {
  const [{ found }] = await sql<{ found: number }[]>`
    with img as (select id from images where short_id = ${shortId}),
    added as (
      insert into favorites (user_id, image_id) select ${userId}, id from img
      on conflict do nothing returning 1)
    select (select count(*) from img)::int as found`;
  return found > 0;
}

/** Removes image `shortId` from account `userId`'s favourites; false when there is no image. */
export async function deleteFavorite(sql: Sql, userId: string, shortId: string): Promise<boolean> {
  const [{ found }] = await sql<{ found: number }[]>`
    with img as (select id from images where short_id = ${shortId}),
    gone as (
      delete from favorites where user_id = ${userId} and image_id in (select id from img)
      returning 1)
    select (select count(*) from img)::int as found`;
  return found > 0;
}

/** A favourite image with its keyset position in the favourites. */
export interface FavoriteRow extends ImageWithTags {
  fav_seq: string;
}

/** Up to `limit` of account `userId`'s favourites before `beforeSeq`, most recent first. */
export async function listFavorites(
  sql: Sql,
  userId: string,
  beforeSeq: string | null,
  limit: number,
): Promise<FavoriteRow[]> {
  return await sql<FavoriteRow[]>`
    select ${COLUMNS(sql)}, ${TAGS(sql)}, f.seq::text as fav_seq
    from favorites f join images i on i.id = f.image_id
    where f.user_id = ${userId} and f.seq < coalesce(${beforeSeq}::bigint, 9223372036854775807)
    order by f.seq desc limit ${limit}`;
}

/** Which of `shortIds` account `userId` has favourited (a page's stars). */
export async function favoritedAmong(
  sql: Sql,
  userId: string,
  shortIds: string[],
): Promise<string[]> {
  const rows = await sql<{ short_id: string }[]>`
    select i.short_id from images i join favorites f on f.image_id = i.id and f.user_id = ${userId}
    where i.short_id = any(${shortIds}::text[])`;
  return rows.map((r) => r.short_id);
}
