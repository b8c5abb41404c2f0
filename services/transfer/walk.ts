/**
 * The files of an import folder, one at a time (a folder's names are read and sorted, nothing
 * more is held), with the tags their place gives them: the names of the sub-folders they sit in
 * and a sidecar text file beside them (`x.gif.txt`, else `x.txt`; the convention of booru
 * downloaders). Sidecars are not images to send; hidden entries are skipped with a reason,
 * symbolic links to folders are not followed (no loops), and a link whose real path leaves the
 * folder is skipped (a pack's `cats/funny.png -> ~/Pictures/private.png` must not upload the
 * private picture, nor a linked sidecar send a private file's words as tags).
 */
import { join, relative, resolve, sep } from "node:path";
import {
  SNIFF_BYTES,
  sniffImage,
  type SniffResult,
  sniffVideo,
  type VideoType,
} from "../../domain/image_sniff.ts";
import { normalizeTag, TagNameError } from "../../domain/tag_names.ts";

/** A sidecar larger than this is not read (tags for one image fit in far less). */
export const MAX_SIDECAR_BYTES = 64 * 1024;

/** One entry of the walk: a candidate file with its folder tags and sidecar, or a skip. */
export type WalkEntry =
  | { kind: "file"; path: string; rel: string; folders: string[]; sidecar: string | null }
  | { kind: "skip"; rel: string; reason: string };

/** Relative paths with forward slashes, the same on every system. */
const slashed = (p: string) => p.split(sep).join("/");

/** The sidecar of `name` among a folder's `names`: `name.txt`, else `base.txt`. */
export function sidecarOf(name: string, names: ReadonlySet<string>): string | null {
  if (names.has(`${name}.txt`)) return `${name}.txt`;
  const dot = name.lastIndexOf(".");
  const short = `${name.slice(0, dot)}.txt`;
  if (dot > 0 && short !== name && names.has(short)) return short;
  return null;
}

/** The names of a folder's files that are sidecars of another of its files. */
function sidecarsAmong(files: string[]): Set<string> {
  const names = new Set(files);
  const out = new Set<string>();
  for (const name of files) {
    const sidecar = sidecarOf(name, names);
    if (sidecar) out.add(sidecar);
  }
  return out;
}

/** Whether `path` is `root` or lies under it (both absolute and resolved). */
function isInside(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

/**
 * What a symbolic link in the walk is: a file inside the root (read through its real path, the
 * one that was checked), a link to skip with the reason, or broken (kept: reading it fails and
 * is reported as such).
 */
async function followLink(
  path: string,
  realRoot: string,
): Promise<{ path: string } | { reason: string }> {
  try {
    const real = await Deno.realPath(path);
    if (!isInside(realRoot, real)) {
      return { reason: "symbolic link out of the folder (not followed)" };
    }
    if ((await Deno.stat(real)).isDirectory) {
      return { reason: "symbolic link to a folder (not followed)" };
    }
    return { path: real };
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return { path };
    return { reason: `cannot read: ${e}` };
  }
}

/**
 * Walks `root` depth-first in name order. Each folder's entries are read, sorted and released
 * before its sub-folders are entered, so memory holds one folder's names per level. Only real
 * folders are entered; a symbolic link is read only when its real path stays under the root's
 * (import_test.ts "a symbolic link out of the folder is skipped").
 */
export async function* walkFolder(
  root: string,
  folders: string[] = [],
  realRoot?: string,
): AsyncGenerator<WalkEntry> {
  realRoot ??= await Deno.realPath(root).catch(() => resolve(root));
  const dir = join(root, ...folders);
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) entries.push(e);
  } catch (e) {
    yield { kind: "skip", rel: slashed(relative(root, dir)) || ".", reason: `cannot read: ${e}` };
    return;
  }
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  // Links are resolved first: one that is skipped is no file and no sidecar either.
  const paths = new Map<string, string>();
  const refused = new Map<string, string>();
  for (const e of entries) {
    if (e.isDirectory || e.name.startsWith(".")) continue;
    const path = join(dir, e.name);
    const link = e.isSymlink ? await followLink(path, realRoot) : { path };
    if ("reason" in link) refused.set(e.name, link.reason);
    else paths.set(e.name, link.path);
  }
  const names = new Set(paths.keys());
  const sidecars = sidecarsAmong([...names]);
  const subfolders: string[] = [];
  for (const e of entries) {
    const rel = slashed(relative(root, join(dir, e.name)));
    if (e.name.startsWith(".")) {
      yield { kind: "skip", rel, reason: e.isDirectory ? "hidden folder" : "hidden file" };
      continue;
    }
    if (e.isDirectory) {
      subfolders.push(e.name);
      continue;
    }
    const reason = refused.get(e.name);
    if (reason) {
      yield { kind: "skip", rel, reason };
      continue;
    }
    if (sidecars.has(e.name)) continue;
    const sidecar = sidecarOf(e.name, names);
    yield {
      kind: "file",
      path: paths.get(e.name)!,
      rel,
      folders,
      sidecar: sidecar ? paths.get(sidecar)! : null,
    };
  }
  for (const sub of subfolders) yield* walkFolder(root, [...folders, sub], realRoot);
}

/** A sidecar's tags: comma- or newline-separated, blanks ignored (not yet normalised). */
export function sidecarTags(text: string): string[] {
  return text.split(/[,\r\n]/).map((t) => t.trim()).filter((t) => t !== "");
}

/** A file is not what the import sends: the reason is shown in the summary. */
export class SkipError extends Error {
  override name = "SkipError";
}

/** Normalised, de-duplicated tags, or SkipError naming where a bad one came from. */
export function normalizeTags(sources: { from: string; tags: string[] }[]): string[] {
  const out = new Set<string>();
  for (const { from, tags } of sources) {
    for (const raw of tags) {
      try {
        out.add(normalizeTag(raw));
      } catch (e) {
        if (e instanceof TagNameError) throw new SkipError(`${from} tag "${raw}": ${e.message}`);
        throw e;
      }
    }
  }
  return [...out];
}

/** Reads a sidecar's tags, refusing one over MAX_SIDECAR_BYTES. */
export async function readSidecar(path: string): Promise<string[]> {
  const info = await Deno.stat(path);
  if (info.size > MAX_SIDECAR_BYTES) {
    throw new SkipError(`sidecar ${path} is larger than ${MAX_SIDECAR_BYTES} bytes`);
  }
  return sidecarTags(await Deno.readTextFile(path));
}

/** What a file's head says it is: an image (with its header's size), or a video (issue 45). */
export type Candidate = SniffResult | { type: VideoType };

/**
 * What `head` (a file's first bytes, or all of them) is: an image the board takes, an MP4 or a
 * WebM, or null. A video's container is only recognised here (sniffVideo on a head reports the
 * rest as cut short); the service checks the whole file and probes it.
 */
export function sniffCandidate(head: Uint8Array): Candidate | null {
  const image = sniffImage(head);
  if (image) return image;
  const video = sniffVideo(head);
  return video ? { type: video.type } : null;
}

/**
 * Reads a file for upload: its size, what its first bytes sniff as (null: not a supported
 * image or video) and, for one that fits in `bufferMax`, its bytes (so it is read once). Only the
 * head of anything else is read; a JPEG is read further when its header runs past the head
 * (metadata before the frame), as the service sniffs the whole file.
 */
export async function readCandidate(path: string, bufferMax: number): Promise<{
  size: number;
  sniffed: Candidate | null;
  bytes?: Uint8Array;
}> {
  const file = await Deno.open(path);
  let head: Uint8Array;
  let size: number;
  try {
    size = (await file.stat()).size;
    head = new Uint8Array(Math.min(size, SNIFF_BYTES));
    let at = 0;
    while (at < head.length) {
      const n = await file.read(head.subarray(at));
      if (n === null) break;
      at += n;
    }
    head = head.subarray(0, at);
  } finally {
    file.close();
  }
  if (head.length === size) return { size, sniffed: sniffCandidate(head), bytes: head };
  const sniffed = sniffCandidate(head);
  const jpeg = head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff;
  if ((!sniffed && !jpeg) || size > bufferMax) return { size, sniffed };
  const bytes = await Deno.readFile(path);
  return { size: bytes.length, sniffed: sniffed ?? sniffImage(bytes), bytes };
}
