/**
 * The files of an import folder, one at a time (a folder's names are read and sorted, nothing
 * more is held), with the tags their place gives them: the names of the sub-folders they sit in
 * and a sidecar text file beside them (`x.gif.txt`, else `x.txt`; the convention of booru
 * downloaders). Sidecars are not images to send; hidden entries are skipped with a reason, and
 * symbolic links to folders are not followed (no loops).
 */
import { join, relative, sep } from "node:path";
import { SNIFF_BYTES, sniffImage, type SniffResult } from "../images/sniff.ts";
import { normalizeTag, TagNameError } from "../tag_names.ts";

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

/**
 * Walks `root` depth-first in name order. Each folder's entries are read, sorted and released
 * before its sub-folders are entered, so memory holds one folder's names per level.
 */
export async function* walkFolder(root: string, folders: string[] = []): AsyncGenerator<WalkEntry> {
  const dir = join(root, ...folders);
  const entries: Deno.DirEntry[] = [];
  try {
    for await (const e of Deno.readDir(dir)) entries.push(e);
  } catch (e) {
    yield { kind: "skip", rel: slashed(relative(root, dir)) || ".", reason: `cannot read: ${e}` };
    return;
  }
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const names = new Set(entries.filter((e) => !e.isDirectory).map((e) => e.name));
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
    if (e.isSymlink) {
      const target = await Deno.stat(join(dir, e.name)).catch(() => null);
      if (target?.isDirectory) {
        yield { kind: "skip", rel, reason: "symbolic link to a folder (not followed)" };
        continue;
      }
    }
    if (sidecars.has(e.name)) continue;
    const sidecar = sidecarOf(e.name, names);
    yield {
      kind: "file",
      path: join(dir, e.name),
      rel,
      folders,
      sidecar: sidecar ? join(dir, sidecar) : null,
    };
  }
  for (const sub of subfolders) yield* walkFolder(root, [...folders, sub]);
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
export function normaliseTags(sources: { from: string; tags: string[] }[]): string[] {
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

/**
 * Reads a file for upload: its size, what its first bytes sniff as (null: not a supported
 * image) and, for an image that fits in `bufferMax`, its bytes (so it is read once). Only the
 * head of anything else is read; a JPEG is read further when its header runs past the head
 * (metadata before the frame), as the service sniffs the whole file.
 */
export async function readCandidate(path: string, bufferMax: number): Promise<{
  size: number;
  sniffed: SniffResult | null;
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
  if (head.length === size) return { size, sniffed: sniffImage(head), bytes: head };
  const sniffed = sniffImage(head);
  const jpeg = head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff;
  if ((!sniffed && !jpeg) || size > bufferMax) return { size, sniffed };
  const bytes = await Deno.readFile(path);
  return { size: bytes.length, sniffed: sniffed ?? sniffImage(bytes), bytes };
}
