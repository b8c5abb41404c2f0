/** Small pure helpers shared by the pages and the islands (no Deno APIs: islands bundle this). */
import { parseFilterText } from "../domain/tag_names.ts";

/**
 * Parses tags typed by a person, comma-separated, the way the API normalises names
 * (domain/tag_names.ts), deduplicated; names that can never be tags (and `-` exclusions) are
 * dropped, where the API's parseTagList refuses the request.
 */
export function parseTagText(text: string | null | undefined): string[] {
  return parseFilterText(text).filter((t) => !t.startsWith("-"));
}

/**
 * The library URL filtered by `tags` (`-name` excludes), searching caption words `q`, from
 * `cursor`; commas stay readable.
 */
export function libraryHref(
  tags: string[],
  q = "",
  cursor: string | null = null,
  uploader = "",
  sort: "newest" | "relevance" = "newest",
): string {
  const parts = [];
  if (tags.length) parts.push(`tags=${tags.map(encodeURIComponent).join(",")}`);
  if (q) parts.push(`q=${encodeURIComponent(q)}`);
  if (uploader) parts.push(`uploader=${encodeURIComponent(uploader)}`);
  // The best match first (issue 43); only a search with words has such an order.
  if (q && sort === "relevance") parts.push("sort=relevance");
  if (cursor) parts.push(`cursor=${encodeURIComponent(cursor)}`);
  return parts.length ? `/?${parts.join("&")}` : "/";
}

/** Alt text of an image (a rule the link previews share, so it lives in the domain). */
export { altText } from "../domain/share_links.ts";

/** "1.4 MB", "812 KB", "532 bytes". */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  const units = ["KB", "MB", "GB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value >= 10 ? Math.round(value) : Math.round(value * 10) / 10} ${units[unit]}`;
}

/** A readable UTC date and time, e.g. "May 1, 2025, 12:34 UTC". */
export function formatDate(iso: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat("en", {
    dateStyle: "medium",
    timeStyle: "short",
    timeZone: "UTC",
  }).format(date) + " UTC";
}

/** "JPEG" from "image/jpeg". */
export function formatType(contentType: string): string {
  const sub = contentType.split("/")[1] ?? contentType;
  return sub.replace(/^x-/, "").toUpperCase();
}

/**
 * The path to return to after login: only a same-origin path that starts with a single `/`
 * (never `//host` or `/\host`, which browsers read as another origin); otherwise `/`.
 */
export function safeNext(next: string | null | undefined): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) {
    return "/";
  }
  // deno-lint-ignore no-control-regex
  if (/[\u0000-\u001f\\]/.test(next)) return "/";
  return next;
}

/** `/login?next=...`, keeping slashes readable. */
export function loginHref(next: string): string {
  return `/login?next=${encodeURIComponent(safeNext(next)).replace(/%2F/g, "/")}`;
}
