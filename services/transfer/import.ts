/**
 * `deno task import <folder>`: every image and video (MP4, WebM) under a folder, sent through the
 * public API with the tags of its sub-folders, its sidecar and `--tags`; everything else listed as
 * skipped with the reason. Content dedup on the server makes a rerun (or the rest of an interrupted run) safe:
 * what is already there answers 200 and only gets the tags.
 */
import { SNIFF_BYTES } from "../../domain/image_sniff.ts";
import { BoardApiError, type BoardClient } from "./client.ts";
import { forEachConcurrent } from "./concurrent.ts";
import { Progress, type ProgressSink } from "./progress.ts";
import { BUFFER_MAX_BYTES, uploadFile } from "./upload.ts";
import {
  normalizeTags,
  readCandidate,
  readSidecar,
  SkipError,
  type WalkEntry,
  walkFolder,
} from "./walk.ts";

/** What an import is asked to do. */
export interface ImportOptions {
  folder: string;
  /** Null for a dry run (nothing is sent). */
  client: BoardClient | null;
  /** `--tags`, already normalised. */
  tags: string[];
  folderTags: boolean;
  concurrency: number;
  sink: ProgressSink;
  /** Given the run's progress as it starts (to print a summary if the run is interrupted). */
  onStart?: (progress: Progress) => void;
}

/** The outcomes of an import, in summary order. */
export const IMPORT_OUTCOMES: [string, string][] = [
  ["created", "created"],
  ["present", "already present (tags merged)"],
  ["skipped", "skipped"],
  ["failed", "failed"],
];

const DRY_RUN_OUTCOMES: [string, string][] = [
  ["send", "would be sent"],
  ["skipped", "skipped"],
  ["failed", "failed"],
];

const NOT_AN_IMAGE = "not a supported image or video (JPEG, PNG, GIF, WebP, AVIF, MP4 or WebM)";

/** `[a, b]`, or `[no tags]`. */
export const tagList = (tags: string[]) => `[${tags.length ? tags.join(", ") : "no tags"}]`;

/** Counts what the walk will meet (files and skips) and the files' bytes, holding nothing. */
async function countFolder(folder: string): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for await (const entry of walkFolder(folder)) {
    files++;
    if (entry.kind === "file") bytes += (await Deno.stat(entry.path).catch(() => null))?.size ?? 0;
  }
  return { files, bytes };
}

/** Runs an import and returns its progress (counts and summary); never throws for one file. */
export async function runImport(opts: ImportOptions): Promise<Progress> {
  const progress = new Progress(opts.sink);
  opts.onStart?.(progress);
  const totals = await countFolder(opts.folder);
  progress.setTotals(totals.files, totals.bytes);
  progress.tick();
  const fail = (rel: string, reason: string, bytes = 0) =>
    progress.record("failed", `${rel}: ${reason}`, `failed ${rel}: ${reason}`, bytes, {
      loud: true,
      failed: true,
    });
  const skip = (rel: string, reason: string, bytes = 0) =>
    progress.record("skipped", `${rel}: ${reason}`, `skipped ${rel}: ${reason}`, bytes, {
      loud: true,
    });

  const one = async (entry: WalkEntry) => {
    if (entry.kind === "skip") return skip(entry.rel, entry.reason);
    let size = 0;
    try {
      const sidecar = entry.sidecar ? await readSidecar(entry.sidecar) : [];
      const tags = normalizeTags([
        { from: "--tags", tags: opts.tags },
        { from: "folder", tags: opts.folderTags ? entry.folders : [] },
        { from: "sidecar", tags: sidecar },
      ]);
      // A dry run only sniffs; an upload reads a file that fits the buffer once, for both.
      const file = await readCandidate(entry.path, opts.client ? BUFFER_MAX_BYTES : SNIFF_BYTES);
      size = file.size;
      if (!file.sniffed) return skip(entry.rel, NOT_AN_IMAGE, size);
      if (!opts.client) {
        const line = `${entry.rel} ${tagList(tags)}`;
        return progress.record("send", line, `would send ${line}`, size);
      }
      const name = entry.rel.split("/").pop()!;
      const { created, image } = await uploadFile(opts.client, {
        path: entry.path,
        name,
        size,
        contentType: file.sniffed.type,
        bytes: file.bytes,
      }, { tags });
      const line = `${entry.rel} -> ${image.short_id} ${tagList(tags)}`;
      progress.record(
        created ? "created" : "present",
        line,
        `${created ? "created" : "present"} ${line}`,
        size,
      );
    } catch (e) {
      if (e instanceof SkipError) return skip(entry.rel, e.message, size);
      if (e instanceof BoardApiError) return fail(entry.rel, e.message, size);
      if (e instanceof Deno.errors.NotFound || e instanceof Deno.errors.PermissionDenied) {
        return fail(entry.rel, `cannot read: ${e.message}`, size);
      }
      fail(entry.rel, e instanceof Error ? e.message : String(e), size);
    }
  };
  await forEachConcurrent(walkFolder(opts.folder), opts.concurrency, one);
  return progress;
}

/** The summary headings of an import (or of a dry run). */
export function importHeadings(dryRun: boolean): [string, string][] {
  return dryRun ? DRY_RUN_OUTCOMES : IMPORT_OUTCOMES;
}
