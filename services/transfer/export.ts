/**
 * `deno task export <folder>`: every original and a manifest, read through the public API (so a
 * remote board exports as well as a local one). Page by page (200 images): the page's originals
 * are streamed to disk, hashed on the way and checked against the image's hash, then its lines
 * are appended to the manifest. Resumable: an original already present with the right hash is
 * kept. The manifest is written beside and renamed into place at the end, so an interrupted run
 * never leaves a manifest that lists a file it did not write.
 */
import { createHash } from "node:crypto";
import { join, resolve, sep } from "node:path";
import type { ImageDto } from "../../domain/types.ts";
import { BoardApiError, type BoardClient, listPages } from "./client.ts";
import { forEachConcurrent } from "./concurrent.ts";
import {
  exportReadme,
  IMAGES_DIR,
  listedImageProblem,
  MANIFEST,
  type ManifestEntry,
  manifestEntry,
} from "./manifest.ts";
import { Progress, type ProgressSink } from "./progress.ts";

/** What an export is asked to do. */
export interface ExportOptions {
  folder: string;
  client: BoardClient;
  concurrency: number;
  sink: ProgressSink;
  /** Given the run's progress as it starts (to print a summary if the run is interrupted). */
  onStart?: (progress: Progress) => void;
}

/** The outcomes of an export, in summary order. */
export const EXPORT_OUTCOMES: [string, string][] = [
  ["downloaded", "downloaded"],
  ["kept", "already present (hash checked)"],
  ["gone", "deleted during the export"],
  ["failed", "failed"],
  ["refused", "refused (not an image of the board's form; nothing written)"],
];

/**
 * `rel` under `folder`, or an Error when it would resolve outside it: a second guard behind the
 * listing's checks, so that no name a board sends can place a file elsewhere.
 */
export function pathInside(folder: string, rel: string): string {
  const root = resolve(folder);
  const path = resolve(root, rel);
  if (!path.startsWith(root.endsWith(sep) ? root : root + sep)) {
    throw new Error(`${rel} is not inside the export folder`);
  }
  return path;
}

/** SHA-256 (hex) of a file, read as a stream; null when there is no such file. */
export async function fileSha256(path: string): Promise<string | null> {
  let file: Deno.FsFile;
  try {
    file = await Deno.open(path);
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return null;
    throw e;
  }
  const hash = createHash("sha256");
  for await (const chunk of file.readable) hash.update(chunk);
  return hash.digest("hex");
}

/** Downloads an original to `path` through a `.part` file, checking its hash; false if wrong. */
async function download(client: BoardClient, image: ImageDto, path: string): Promise<boolean> {
  const res = await client.request(`/api/v1/images/${image.short_id}/file`, {
    headers: { accept: "*/*" },
  });
  const part = `${path}.part`;
  const out = await Deno.open(part, { write: true, create: true, truncate: true });
  const hash = createHash("sha256");
  try {
    await res.body!.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          hash.update(chunk);
          controller.enqueue(chunk);
        },
      }),
    ).pipeTo(out.writable);
  } catch (e) {
    await Deno.remove(part).catch(() => {});
    throw e;
  }
  if (hash.digest("hex") !== image.hash) {
    await Deno.remove(part).catch(() => {});
    return false;
  }
  await Deno.rename(part, path);
  return true;
}

/** Counts the images and their bytes, one page at a time. */
async function countImages(client: BoardClient): Promise<{ files: number; bytes: number }> {
  let files = 0;
  let bytes = 0;
  for await (const page of listPages(client)) {
    files += page.length;
    // A refused image adds no bytes: it is counted done with none when it is met.
    for (const image of page) if (!listedImageProblem(image)) bytes += image.size_bytes;
  }
  return { files, bytes };
}

/** Runs an export and returns its progress; a failed image is left out of the manifest. */
export async function runExport(opts: ExportOptions): Promise<Progress> {
  const { client, folder } = opts;
  await Deno.mkdir(join(folder, IMAGES_DIR), { recursive: true });
  const progress = new Progress(opts.sink, "images");
  opts.onStart?.(progress);
  const totals = await countImages(client);
  progress.setTotals(totals.files, totals.bytes);
  progress.tick();

  const partial = join(folder, `${MANIFEST}.partial`);
  const manifest = await Deno.open(partial, { write: true, create: true, truncate: true });
  const encoder = new TextEncoder();
  let listed = 0;
  try {
    for await (const listing of listPages(client)) {
      // Each item is checked before anything is made of it; a bad one is reported, not written.
      const page: ImageDto[] = [];
      for (const item of listing) {
        const problem = listedImageProblem(item);
        listed++;
        if (!problem) {
          page.push(item);
          continue;
        }
        const text = `listed image ${listed}: ${problem}`;
        progress.record("refused", text, `refused ${text}`, 0, { loud: true, failed: true });
      }
      const entries = page.map(manifestEntry);
      const ok = new Set<ManifestEntry>();
      await forEachConcurrent(
        entries.map((e, i) => [e, page[i]] as const),
        opts.concurrency,
        async ([entry, image]) => {
          const name = `${entry.file} (${entry.short_id})`;
          try {
            const path = pathInside(folder, entry.file);
            const info = await Deno.stat(path).catch(() => null);
            if (info?.size === image.size_bytes && await fileSha256(path) === image.hash) {
              ok.add(entry);
              return progress.record("kept", name, `kept ${name}`, image.size_bytes);
            }
            if (!await download(client, image, path)) {
              return progress.record(
                "failed",
                `${name}: the bytes do not match the image's hash`,
                `failed ${name}: the bytes do not match the image's hash`,
                image.size_bytes,
                { loud: true, failed: true },
              );
            }
            ok.add(entry);
            progress.record("downloaded", name, `downloaded ${name}`, image.size_bytes);
          } catch (e) {
            if (e instanceof BoardApiError && e.status === 404) {
              // Deleted since it was listed: not part of the board any more, so not of its export.
              return progress.record("gone", name, `gone ${name}`, image.size_bytes);
            }
            const reason = e instanceof BoardApiError || e instanceof Error ? e.message : String(e);
            progress.record(
              "failed",
              `${name}: ${reason}`,
              `failed ${name}: ${reason}`,
              image.size_bytes,
              { loud: true, failed: true },
            );
          }
        },
      );
      const lines = entries.filter((e) => ok.has(e)).map((e) => `${JSON.stringify(e)}\n`).join("");
      const bytes = encoder.encode(lines);
      for (let at = 0; at < bytes.length;) at += await manifest.write(bytes.subarray(at));
    }
  } finally {
    manifest.close();
  }
  await Deno.rename(partial, join(folder, MANIFEST));
  await Deno.writeTextFile(
    join(folder, "README.txt"),
    exportReadme(client.base, new Date().toISOString()),
  );
  return progress;
}
