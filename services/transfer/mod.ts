/**
 * Moving a collection in and out of the board, as a client of its public API (so a remote board
 * works as well as a local one), with memory that does not grow with the collection.
 *
 * - `cli.ts`: the command lines of `deno task import` and `deno task export`; `credentials.ts`:
 *   the credential from options, environment or a prompt.
 * - `import.ts`: a folder tree in, tagged by sub-folder, sidecar and `--tags`.
 * - `export.ts`: every original and `manifest.jsonl` out, resumable.
 * - `restore.ts`: an export back in, with its short IDs, dates and tags.
 * - `manifest.ts`: the export format and its README.txt.
 * - `walk.ts`: the folder walk, sidecars and tag sources; `upload.ts`: one file as a form.
 * - `client.ts`: the API with retries (429/503 with `Retry-After`), deadlines and sign-in.
 * - `progress.ts`: the bar on a terminal, plain lines otherwise, and the summary.
 * - `concurrent.ts`, `lines.ts`: bounded concurrency over a stream; a file's lines either way.
 */
export { exportMain, importMain, UsageError } from "./cli.ts";
export { backoffMs, BoardApiError, BoardClient, retryAfterMs } from "./client.ts";
export { runExport } from "./export.ts";
export { runImport } from "./import.ts";
export { runRestore } from "./restore.ts";
export { type ProgressSink, renderBar } from "./progress.ts";
