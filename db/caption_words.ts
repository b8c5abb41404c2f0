/**
 * The searchable words of a caption (migration 009): the dictionary `caption_words` and each
 * image's links in `image_words`, written with the caption in the same transaction.
 */
import type postgres from "postgres";
import { wordsOf } from "../lib/text/caption_text.ts";
import type { Fragment } from "./client.ts";

/** Who wrote a caption: recognition, or a person (never overwritten by recognition). */
export type TextSource = "ocr" | "manual";

/**
 * The statements that give the image that `image` selects (as `i`) the words of `text`: new
 * words go into the dictionary, then the links. Each finds the image itself, so they can be
 * pipelined with the statement that writes the image (db/images.ts insertImage).
 */
export function linkWordStatements(
  tx: postgres.TransactionSql,
  image: Fragment,
  text: string,
): Fragment[] {
  // Sorted: concurrent writers take the dictionary rows' locks in one order (no deadlock).
  const words = wordsOf(text).sort();
  if (!words.length) return [];
  return [
    tx`insert into caption_words (word) select w from unnest(${words}::text[]) w order by w
      on conflict (word) do nothing`,
    tx`insert into image_words (word_id, image_seq, image_id)
      select w.id, i.seq, i.id from images i cross join caption_words w
      where ${image} and w.word = any(${words}::text[])
      order by w.id
      on conflict do nothing`,
  ];
}

/** Replaces the words of the image with this ID by those of `text`, inside the caller's transaction. */
export async function replaceWords(
  tx: postgres.TransactionSql,
  imageId: string,
  text: string,
): Promise<void> {
  await tx`delete from image_words where image_id = ${imageId}`;
  for (const statement of linkWordStatements(tx, tx`i.id = ${imageId}`, text)) await statement;
}
