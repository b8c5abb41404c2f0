import assert from "node:assert/strict";
import { keepNotes } from "./notes.ts";

const GENERATED = "# Benchmark results\n\n## Summary\n\n| a |\n\n## B1 x (3 s)\n\n- note\n";

Deno.test("keepNotes() carries the previous file's notes over to the new tables", () => {
  const previous =
    "# Benchmark results\n\n## Summary\n\nold\n\n## Notes on the run\n\nWhy B2 is 1.46x.\n";
  assert.equal(
    keepNotes(GENERATED, previous),
    `${GENERATED}\n## Notes on the run\n\nWhy B2 is 1.46x.\n`,
  );
});

Deno.test("keepNotes() leaves the tables alone when there are no notes, or no file", () => {
  assert.equal(keepNotes(GENERATED, "# Benchmark results\n\n## Summary\n\nold\n"), GENERATED);
  assert.equal(keepNotes(GENERATED, ""), GENERATED);
  // A heading that only starts with the word is not the notes.
  assert.equal(keepNotes(GENERATED, "## Notesworthy\n"), GENERATED);
});
