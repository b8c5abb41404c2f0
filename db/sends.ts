/**
 * Sends (migration 017): an image sent from a chat or copied from its page counts once per sender
 * per UTC day, and images.send_count follows in the same statement.
 */
import type { Sql } from "./client.ts";
import { COLUMNS, type ImageWithTags, TAGS } from "./images.ts";

/**
 * Counts a send of image `shortId` by `sender` today (UTC): `counted`, `repeat` when the sender
 * sent it today already, `missing` when there is no such image.
 */
export async function recordSend(
  sql: Sql,
  shortId: string,
  sender: string,
): Promise<"counted" | "repeat" | "missing"> {
  const [row] = await sql<{ found: number; counted: number }[]>`
    with img as (select id from images where short_id = ${shortId}),
    added as (
      insert into image_sends (image_id, sender, day)
      select id, ${sender}, (now() at time zone 'utc')::date from img
      on conflict do nothing returning image_id),
    counted as (
      update images i set send_count = i.send_count + 1 from added where i.id = added.image_id
      returning 1)
    select (select count(*) from img)::int as found, (select count(*) from counted)::int as counted`;
  return row.found === 0 ? "missing" : row.counted > 0 ? "counted" : "repeat";
}

/** A most-sent listing's row, with its keyset position. */
export interface SentRow extends ImageWithTags {
  send_count: number;
}

/**
 * Up to `limit` images, most sent first, newest among equals, after the position
 * (`send_count`, `seq`) of `after` (null: from the start).
 */
export async function listMostSent(
  sql: Sql,
  after: { sendCount: number; seq: string } | null,
  limit: number,
): Promise<SentRow[]> {
  const count = after?.sendCount ?? 2147483647;
  const seq = after?.seq ?? "9223372036854775807";
  return await sql<SentRow[]>`
    select ${COLUMNS(sql)}, ${TAGS(sql)} from images i
    where (i.send_count, i.seq) < (${count}::int, ${seq}::bigint)
    order by i.send_count desc, i.seq desc
    limit ${limit}`;
}
