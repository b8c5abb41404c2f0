/**
 * An image's caption (migration 009), written with its words in one transaction: set by
 * recognition or a person, or cleared for recognition to read again. Searching by the words is
 * db/caption_search.ts. The columns are images.text and images.text_source, named as the API's
 * fields that show them.
 */
import type { Sql } from "./client.ts";
import { transaction } from "./client.ts";
import { replaceWords } from "./caption_words.ts";

export type { CaptionSource } from "./caption_words.ts";
import type { CaptionSource } from "./caption_words.ts";

/**
 * Sets the caption of the image with this short ID and its words, in one transaction. Recognition
 * (`source` "ocr") leaves a person's text alone. Returns false when nothing was written (no such
 * image, or a person's text kept).
 */
export async function setImageCaption(
  sql: Sql,
  shortId: string,
  text: string,
  source: CaptionSource,
): Promise<boolean> {
  return await transaction(sql, async (tx) => {
    const [row] = await tx<{ id: string }[]>`
      update images set text = ${text}, text_source = ${source}
      where short_id = ${shortId} and (${source} = 'manual' or text_source is distinct from 'manual')
      returning id`;
    if (!row) return false;
    await replaceWords(tx, row.id, text);
    return true;
  });
}

/**
 * Clears a person's caption so that recognition writes it again; returns false when the image
 * does not exist.
 */
export async function clearImageCaption(sql: Sql, shortId: string): Promise<boolean> {
  return await transaction(sql, async (tx) => {
    const [row] = await tx<{ id: string }[]>`
      update images set text = null, text_source = null where short_id = ${shortId}
      returning id`;
    if (!row) return false;
    await replaceWords(tx, row.id, "");
    return true;
  });
}
