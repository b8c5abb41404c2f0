/** The MP4 renditions of moving images (issue 45, migration 018): what is made and what is due. */
import type { Sql } from "./client.ts";
import { MOVING_TYPES } from "../domain/share_links.ts";

/** What the rendition job reads of an image; null when it is gone. */
export async function getRenditionSource(
  sql: Sql,
  shortId: string,
): Promise<
  { content_type: string; mp4_bytes: number | null; preview_bytes: number | null } | null
> {
  const [row] = await sql<
    { content_type: string; mp4_bytes: number | null; preview_bytes: number | null }[]
  >`
    select content_type, mp4_bytes::float8 as mp4_bytes, preview_bytes::float8 as preview_bytes
    from images where short_id = ${shortId}`;
  return row ?? null;
}

/** Records that the animated preview is stored; false when the image was deleted meanwhile. */
export async function setPreviewBytes(sql: Sql, shortId: string, bytes: number): Promise<boolean> {
  const rows = await sql`
    update images set preview_bytes = ${bytes} where short_id = ${shortId} returning 1`;
  return rows.length > 0;
}

/** Records that the MP4 is stored; false when the image was deleted meanwhile. */
export async function setMp4Bytes(sql: Sql, shortId: string, bytes: number): Promise<boolean> {
  const rows = await sql`
    update images set mp4_bytes = ${bytes} where short_id = ${shortId} returning 1`;
  return rows.length > 0;
}

/**
 * Up to `limit` images without their MP4 or preview after `seq` = `after` (the backfill's
 * batches): the moving types, and every WebP, which moves only when its header says it is
 * animated (the backfill reads that header before queueing one; a still WebP is left alone).
 */
export async function movingWithoutRenditions(
  sql: Sql,
  after: string,
  limit: number,
): Promise<{ short_id: string; seq: string; content_type: string }[]> {
  return await sql<{ short_id: string; seq: string; content_type: string }[]>`
    select short_id, seq::text as seq, content_type from images
    where (mp4_bytes is null or preview_bytes is null)
      and content_type = any(${[...MOVING_TYPES, "image/webp"]}) and seq > ${after}::bigint
    order by images.seq limit ${limit}`;
}

/**
 * How many images lack their MP4 or preview: `moving`, of a moving type (GIF, MP4, WebM), and
 * `webp`, WebPs, which the backfill checks for animation (the database does not know which move).
 */
export async function countMovingWithoutRenditions(
  sql: Sql,
): Promise<{ moving: number; webp: number }> {
  const [row] = await sql<{ moving: number; webp: number }[]>`
    select count(*) filter (where content_type <> 'image/webp')::int as moving,
      count(*) filter (where content_type = 'image/webp')::int as webp
    from images
    where (mp4_bytes is null or preview_bytes is null)
      and content_type = any(${[...MOVING_TYPES, "image/webp"]})`;
  return row;
}
