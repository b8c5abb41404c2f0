/**
 * The command lines of `deno task import` and `deno task export`: options, the credential
 * (`--username`/`--password`, else IMAGEBOARD_USERNAME/IMAGEBOARD_PASSWORD, else a prompt on a
 * terminal), and exit codes: 0 done, 1 some files failed, 2 the run could not start.
 */
import { parseArgs } from "node:util";
import { BoardApiError, BoardClient } from "./client.ts";
import { runExport } from "./export.ts";
import { importHeadings, runImport } from "./import.ts";
import { consoleSink, printable, type Progress, type ProgressSink } from "./progress.ts";
import { RESTORE_OUTCOMES, runRestore } from "./restore.ts";
import { EXPORT_OUTCOMES } from "./export.ts";
import { normalizeTags, SkipError } from "./walk.ts";
import { credentials, UsageError } from "./credentials.ts";

/** The board a tool talks to when neither `--url` nor IMAGEBOARD_URL says otherwise. */
export const DEFAULT_URL = "http://localhost:8000";

export { UsageError };

const IMPORT_USAGE = `Usage: deno task import <folder> [options]
       deno task import --restore <export folder> [options]

Uploads every image and video (MP4, WebM) under <folder> through the board's API, tagged with its
sub-folder names, its sidecar (x.gif.txt or x.txt: tags separated by commas or newlines) and --tags.

Options:
  --url URL            the board (default IMAGEBOARD_URL, else ${DEFAULT_URL})
  --username NAME      (default IMAGEBOARD_USERNAME, else admin)
  --password PASSWORD  (default IMAGEBOARD_PASSWORD, else asked on the terminal)
  --api-key KEY        a personal API key with the upload scope, instead of a password
                       (default IMAGEBOARD_API_KEY)
  --tags a,b           tags for every file
  --no-folder-tags     do not tag files with their sub-folder names
  --concurrency N      uploads in flight (default 4; 1 with --restore, which keeps the order)
  --dry-run            list what would be sent, with its tags; send nothing
  --restore            <folder> is an export: recreate its short IDs, dates and tags
  --help`;

const EXPORT_USAGE = `Usage: deno task export <folder> [options]

Writes every original (images/{short_id}.{ext}), manifest.jsonl and README.txt into <folder>,
reading through the board's API. Run it again to bring the folder up to date.

Options:
  --url URL          the board (default IMAGEBOARD_URL, else ${DEFAULT_URL})
  --api-key KEY      a personal API key, sent with every request (default IMAGEBOARD_API_KEY)
  --concurrency N    downloads in flight (default 4)
  --help`;

/** `--concurrency`: an integer from 1 to 64. */
function concurrency(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 64) {
    throw new UsageError("--concurrency must be a whole number from 1 to 64");
  }
  return n;
}

/** The board's address from `--url`, or the environment, checked. */
function boardUrl(value: string | undefined): string {
  const url = value ?? Deno.env.get("IMAGEBOARD_URL") ?? DEFAULT_URL;
  try {
    const parsed = new URL(url);
    if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error();
  } catch {
    throw new UsageError(`--url: "${url}" is not an http(s) address`);
  }
  return url;
}

/** `--api-key`, else IMAGEBOARD_API_KEY, checked for the key's shape; undefined for neither. */
function apiKeyOf(value: string | undefined): string | undefined {
  const key = value ?? Deno.env.get("IMAGEBOARD_API_KEY");
  if (key === undefined || key === "") return undefined;
  if (!/^rb_[A-Za-z0-9_-]{43,}$/.test(key)) {
    throw new UsageError("--api-key: not an API key (rb_ and 43 or more characters)");
  }
  return key;
}

/** Prints the summary and returns the exit code: 1 when any item failed or was refused. */
function finish(sink: ProgressSink, progress: Progress, headings: [string, string][]): number {
  progress.tick();
  for (const line of progress.summary(headings)) sink.out(line);
  return progress.state.failed > 0 ? 1 : 0;
}

/**
 * On Ctrl-C (or SIGTERM) while a run is under way: the summary so far, then exit code 130.
 * Returns the function that removes the handlers.
 */
function summaryOnInterrupt(sink: ProgressSink, headings: [string, string][]) {
  const signals: Deno.Signal[] = ["SIGINT", "SIGTERM"];
  let progress: Progress | null = null;
  const handler = () => {
    sink.out("Interrupted: the summary so far (run it again to finish; what is done is kept)");
    if (progress) { for (const line of progress.summary(headings)) sink.out(line); }
    Deno.exit(130);
  };
  for (const s of signals) Deno.addSignalListener(s, handler);
  return {
    onStart: (p: Progress) => progress = p,
    remove: () => signals.forEach((s) => Deno.removeSignalListener(s, handler)),
  };
}

/** A client whose retries are written to the output. */
function newClient(
  url: string,
  sink: ProgressSink,
  creds?: { username: string; password: string },
  apiKey?: string,
) {
  return new BoardClient({
    url,
    credentials: creds,
    apiKey,
    onRetry: ({ status, waitMs, path }) =>
      sink.out(
        `retry ${path} in ${(waitMs / 1000).toFixed(1)} s (${
          status === null ? "no answer" : `HTTP ${status}`
        })`,
      ),
  });
}

/** Runs `fn`, mapping a refusal to start to exit code 2 with its message. */
async function guarded(sink: ProgressSink, fn: () => Promise<number>): Promise<number> {
  try {
    return await fn();
  } catch (e) {
    if (e instanceof UsageError) {
      console.error(printable(`error: ${e.message}`));
      return 2;
    }
    if (e instanceof BoardApiError) {
      sink.out(`error: ${e.message}`);
      return 2;
    }
    if (
      e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied ||
      e instanceof TypeError
    ) {
      sink.out(`error: ${e.message}`);
      return 2;
    }
    throw e;
  }
}

/** `deno task import`; resolves with the exit code. */
export function importMain(args: string[], sink: ProgressSink = consoleSink()): Promise<number> {
  return guarded(sink, async () => {
    let parsed;
    try {
      parsed = parseArgs({
        args,
        allowPositionals: true,
        options: {
          url: { type: "string" },
          username: { type: "string" },
          password: { type: "string" },
          "api-key": { type: "string" },
          tags: { type: "string", multiple: true },
          "no-folder-tags": { type: "boolean" },
          concurrency: { type: "string" },
          "dry-run": { type: "boolean" },
          restore: { type: "boolean" },
          help: { type: "boolean" },
        },
      });
    } catch (e) {
      throw new UsageError(`${(e as Error).message}\n\n${IMPORT_USAGE}`);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      console.log(IMPORT_USAGE);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError(`give one folder\n\n${IMPORT_USAGE}`);
    const folder = positionals[0];
    const info = await Deno.stat(folder).catch(() => null);
    if (!info?.isDirectory) throw new UsageError(`${folder} is not a folder`);
    const url = boardUrl(values.url);
    const restore = values.restore ?? false;
    const n = concurrency(values.concurrency, restore ? 1 : 4);
    if (restore) {
      if (values["dry-run"] || values.tags || values["no-folder-tags"]) {
        throw new UsageError(
          "--restore takes the tags from the manifest: no --tags, --dry-run or --no-folder-tags",
        );
      }
      if (!(await Deno.stat(`${folder}/manifest.jsonl`).catch(() => null))?.isFile) {
        throw new UsageError(`${folder} has no manifest.jsonl: is it an export folder?`);
      }
    }
    let tags: string[];
    try {
      tags = normalizeTags([{
        from: "--tags",
        tags: (values.tags ?? []).flatMap((t) => t.split(",")).filter((t) => t.trim()),
      }]);
    } catch (e) {
      if (e instanceof SkipError) throw new UsageError(e.message);
      throw e;
    }
    const dryRun = values["dry-run"] ?? false;
    let client: BoardClient | null = null;
    if (!dryRun) {
      const apiKey = apiKeyOf(values["api-key"]);
      client = apiKey
        ? newClient(url, sink, undefined, apiKey)
        : newClient(url, sink, await credentials(values));
      await client.login();
    }
    const headings = restore ? RESTORE_OUTCOMES : importHeadings(dryRun);
    const interrupt = summaryOnInterrupt(sink, headings);
    try {
      const progress = restore
        ? await runRestore({
          folder,
          client: client!,
          concurrency: n,
          sink,
          onStart: interrupt.onStart,
        })
        : await runImport({
          folder,
          client,
          tags,
          folderTags: !values["no-folder-tags"],
          concurrency: n,
          sink,
          onStart: interrupt.onStart,
        });
      return finish(sink, progress, headings);
    } finally {
      interrupt.remove();
    }
  });
}

/** `deno task export`; resolves with the exit code. */
export function exportMain(args: string[], sink: ProgressSink = consoleSink()): Promise<number> {
  return guarded(sink, async () => {
    let parsed;
    try {
      parsed = parseArgs({
        args,
        allowPositionals: true,
        options: {
          url: { type: "string" },
          "api-key": { type: "string" },
          concurrency: { type: "string" },
          help: { type: "boolean" },
        },
      });
    } catch (e) {
      throw new UsageError(`${(e as Error).message}\n\n${EXPORT_USAGE}`);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      console.log(EXPORT_USAGE);
      return 0;
    }
    if (positionals.length !== 1) throw new UsageError(`give one folder\n\n${EXPORT_USAGE}`);
    const client = newClient(boardUrl(values.url), sink, undefined, apiKeyOf(values["api-key"]));
    const interrupt = summaryOnInterrupt(sink, EXPORT_OUTCOMES);
    try {
      const progress = await runExport({
        folder: positionals[0],
        client,
        concurrency: concurrency(values.concurrency, 4),
        sink,
        onStart: interrupt.onStart,
      });
      return finish(sink, progress, EXPORT_OUTCOMES);
    } finally {
      interrupt.remove();
    }
  });
}
