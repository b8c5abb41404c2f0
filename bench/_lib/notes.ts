/**
 * The hand-written notes of bench/RESULTS.md: `deno task bench` regenerates the tables above
 * them, and carries the notes over unchanged, so a run never deletes what people wrote.
 *
 * @module
 */

/** The heading the notes start with; everything from it to the end of the file is kept. */
export const NOTES_HEADING = "## Notes";

/** `generated` followed by the notes of `previous` (from a line starting NOTES_HEADING on). */
export function keepNotes(generated: string, previous: string): string {
  const at = previous.search(new RegExp(`^${NOTES_HEADING}\\b`, "m"));
  if (at < 0) return generated;
  return `${generated.trimEnd()}\n\n${previous.slice(at).trimEnd()}\n`;
}
