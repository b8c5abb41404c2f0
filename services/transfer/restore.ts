/**
 * `deno task import --restore <export folder>`: an export put back with its short IDs, creation
 * dates and tags. The manifest is read from its last line to its first (oldest image first, a
 * block at a time), so that with one upload at a time (the default of a restore) the board lists
 * the images in their original order; each original is checked against its hash before it is
 * sent.
 */
import { join } from "node:path";
import { sha256Hex } from "../../domain/hash.ts";
import { BoardApiError, type BoardClient } from "./client.ts";
import { forEachConcurrent } from "./concurrent.ts";
import { fileSha256 } from "./export.ts";
import { tagList } from "./import.ts";
import { readLines, readLinesBackward } from "./lines.ts";
import { MANIFEST, type ManifestEntry, parseManifestLine } from "./manifest.ts";
import { Progress, type ProgressSink } from "./progress.ts";
import { BUFFER_MAX_BYTES, uploadFile } from "./upload.ts";

/** What a restore is asked to do. */
export interface RestoreOptions {
  folder: string;
  client: BoardClient;
  concurrency: number;
  sink: ProgressSink;
  /** Given the run's progress as it starts (to print a summary if the run is interrupted). */
  onStart?: (progress: Progress) => void;
}

/** The outcomes of a restore, in summary order. */
export const RESTORE_OUTCOMES: [string, string][] = [
  ["created", "created"],
  ["present", "already present (tags merged)"],
  ["failed", "failed"],
];

/** Counts the manifest's lines and their bytes, reading it as a stream. */
async function countManifest(path: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for await (const line of readLines(path)) {
    files++;
    try {
      bytes += Number(JSON.parse(line).size_bytes) || 0;
    } catch { /* counted; reported when it is restored */ }
  }
  return { files, bytes };
}

/** Restores the export in `folder`; never throws for one image. */
export async function runRestore(opts: RestoreOptions): Promise<Progress> {
  const manifest = join(opts.folder, MANIFEST);
  const progress = new Progress(opts.sink, "images");
  opts.onStart?.(progress);
  const totals = await countManifest(manifest);
  progress.setTotals(totals.files, totals.bytes);
  progress.tick();
  let lineNo = totals.files + 1;

  const one = async (line: string) => {
    const where = `${MANIFEST} line ${--lineNo}`;
    let entry: ManifestEntry;
    try {
      entry = parseManifestLine(line);
    } catch (e) {
      const reason = e instanceof Error ? e.message : String(e);
      return progress.record("failed", `${where}: ${reason}`, `failed ${where}: ${reason}`, 0, {
        loud: true,
        failed: true,
      });
    }
    const name = `${entry.file} (${entry.short_id})`;
    const fail = (reason: string) =>
      progress.record(
        "failed",
        `${name}: ${reason}`,
        `failed ${name}: ${reason}`,
        entry.size_bytes,
        {
          loud: true,
          failed: true,
        },
      );
    try {
      const path = join(opts.folder, entry.file);
      const size = (await Deno.stat(path)).size;
      const bytes = size <= BUFFER_MAX_BYTES ? await Deno.readFile(path) : undefined;
      const hash = bytes ? sha256Hex(bytes) : await fileSha256(path);
      if (hash !== entry.hash) return fail("the file does not match the manifest's hash");
      const { created, image } = await uploadFile(opts.client, {
        path,
        name: entry.file.split("/").pop()!,
        size,
        contentType: entry.content_type,
        bytes,
      }, {
        tags: entry.tags,
        short_id: entry.short_id,
        created_at: entry.created_at,
        // Kept when that person has an account here; an export from before accounts names nobody.
        uploaded_by: typeof entry.uploaded_by === "string" ? entry.uploaded_by : "",
        // A caption travels as it was; one not recognised yet is recognised on arrival.
        ...(typeof entry.text === "string"
          ? { text: entry.text, text_source: String(entry.text_source ?? "manual") }
          : {}),
      });
      const moved = image.short_id === entry.short_id ? "" : ` (this content is ${image.short_id})`;
      const text = `${name}${moved} ${tagList(entry.tags)}`;
      progress.record(
        created ? "created" : "present",
        text,
        `${created ? "created" : "present"} ${text}`,
        size,
      );
    } catch (e) {
      if (e instanceof BoardApiError && e.code === "short_id_taken") {
        return fail(`the short ID is taken by an image with other content (${e.message})`);
      }
      if (e instanceof Deno.errors.NotFound) return fail("the file is missing");
      fail(e instanceof Error ? e.message : String(e));
    }
  };
  await forEachConcurrent(readLinesBackward(manifest), opts.concurrency, one);
  return progress;
}
