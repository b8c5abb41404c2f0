/**
 * The searchable words of a caption (migration 009): the dictionary `caption_words` and each
 * image's links in `image_words`, written with the caption in the same transaction.
 */
import type postgres from "postgres";
import { wordsOf } from "../domain/caption_text.ts";
import type { Fragment } from "./client.ts";

/** Who wrote a caption: recognition, or a person (never overwritten by recognition). */
export type CaptionSource = "ocr" | "manual";

/**
 * Key of the advisory lock that a transaction adding words to the dictionary takes before it
 * writes any caption row: a new word's near spellings are found among the words committed
 * (migration 013's trigger), so two writers adding words near each other must not overlap. Taken
 * only when some word is new, so writers of known words never wait; and before the transaction's
 * first lock on a dictionary row, so a holder never waits for one of its waiters.
 */
export const NEW_WORDS_LOCK = 0x6361705f776f7264n; // "cap_word"

/** The statement that takes NEW_WORDS_LOCK if some of `words` is not in the dictionary. */
function lockIfNewWords(tx: postgres.TransactionSql, words: string[]): Fragment {
  return tx`select pg_advisory_xact_lock(${NEW_WORDS_LOCK.toString()}::bigint)
    where exists (select 1 from unnest(${words}::text[]) w
                  where not exists (select 1 from caption_words c where c.word = w))`;
}

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
    lockIfNewWords(tx, words),
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
  // The lock (when a word is new) before the delete, whose counts lock dictionary rows.
  const [lock, ...link] = linkWordStatements(tx, tx`i.id = ${imageId}`, text);
  if (lock) await lock;
  await tx`delete from image_words where image_id = ${imageId}`;
  for (const statement of link) await statement;
}
