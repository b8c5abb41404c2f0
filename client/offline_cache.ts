/**
 * What the pages read of the service worker's caches (static/sw.js, whose names must match): the
 * thumbnails of recently viewed images, and files shared into the board waiting to be uploaded.
 * Browser-only.
 */

/** The cache of recently viewed thumbnails (THUMBS in static/sw.js). */
export const THUMBS_CACHE = "thumbs-v1";
/** Where shared files wait for the upload page (INBOX in static/sw.js). */
export const SHARE_INBOX = "share-inbox-v1";

const THUMBNAIL = /\/api\/v1\/images\/([0-9A-Za-z]{8})\/thumbnail$/;

/** A kept thumbnail: the image's short ID and the thumbnail's URL. */
export interface KeptThumbnail {
  shortId: string;
  url: string;
}

/** The kept thumbnails, most recently kept first; none without the Cache API. */
export async function recentThumbnails(): Promise<KeptThumbnail[]> {
  if (!("caches" in globalThis)) return [];
  const cache = await caches.open(THUMBS_CACHE);
  const kept: KeptThumbnail[] = [];
  for (const request of await cache.keys()) {
    const match = THUMBNAIL.exec(new URL(request.url).pathname);
    if (match) kept.push({ shortId: match[1], url: request.url });
  }
  return kept.reverse();
}

/** What a share brought: its files, and its title, text and link. */
export interface SharedItems {
  files: File[];
  title: string;
  text: string;
  url: string;
  /** Files beyond the inbox's limit, not kept. */
  dropped: number;
}

/** The files and text waiting in the share inbox, or null when it is empty. */
export async function readSharedItems(): Promise<SharedItems | null> {
  if (!("caches" in globalThis) || !await caches.has(SHARE_INBOX)) return null;
  const inbox = await caches.open(SHARE_INBOX);
  const meta = await inbox.match("/_share/meta");
  if (!meta) return null;
  const info = await meta.json() as Partial<SharedItems> & { files?: number };
  const files: File[] = [];
  for (let i = 0; i < (info.files ?? 0); i++) {
    const res = await inbox.match(`/_share/file/${i}`);
    if (!res) continue;
    const type = res.headers.get("content-type") ?? "application/octet-stream";
    const name = decodeURIComponent(res.headers.get("x-file-name") ?? "") || `shared-${i + 1}`;
    files.push(new File([await res.blob()], name, { type }));
  }
  return {
    files,
    title: info.title ?? "",
    text: info.text ?? "",
    url: info.url ?? "",
    dropped: info.dropped ?? 0,
  };
}

/** Empties the share inbox (once its files are on their way, or dismissed). */
export async function clearSharedItems(): Promise<void> {
  if ("caches" in globalThis) await caches.delete(SHARE_INBOX);
}

/**
 * The tags a share suggests: its text (its title when it has none), without links, split at
 * commas, new lines and hashtags, at most 10, each at most 64 characters. The upload form's tag
 * field shows them for the person to correct.
 */
export function suggestedTags(title: string, text: string): string[] {
  const words = (text.trim() || title).replace(/\bhttps?:\/\/\S+/gi, " ");
  const tags: string[] = [];
  for (const raw of words.split(/[,\n#]+/)) {
    const tag = raw.trim().replace(/\s+/g, " ").toLowerCase().slice(0, 64);
    if (tag && !tags.includes(tag)) tags.push(tag);
    if (tags.length === 10) break;
  }
  return tags;
}
