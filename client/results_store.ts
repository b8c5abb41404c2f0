/**
 * Keeping the list an image page is opened from (client/results.ts reads it back): the part the
 * library needs as it renders, kept apart so that it stays within the library page's budget
 * (routes/_pages_test.ts) while the rest of client/results.ts loads with the image page.
 * Browser-only.
 */

/** The sessionStorage key of the kept list. */
export const KEY = "imageboard.results";
/** Most IDs kept: a long scroll of the library stays far below sessionStorage's quota. */
export const MAX_IDS = 2000;

/** What the list is. */
export type ResultsSearch =
  | { kind: "library"; tags: string[]; q: string; sort?: "newest" | "relevance" }
  | { kind: "image"; label: string };

/** A list of results, in order, and how to load more of it. */
export interface Results {
  search: ResultsSearch;
  ids: string[];
  /** The library's cursor of the page after `ids`; null when there is no more. */
  nextCursor: string | null;
}

/** Remembers `images` (in order) as the list the next image page is opened from. */
export function rememberResults(
  search: ResultsSearch,
  images: { short_id: string }[],
  nextCursor: string | null = null,
): void {
  const results: Results = {
    search,
    ids: images.slice(0, MAX_IDS).map((i) => i.short_id),
    nextCursor: images.length > MAX_IDS ? null : nextCursor,
  };
  try {
    sessionStorage.setItem(KEY, JSON.stringify(results));
  } catch {
    // storage full or disabled: no previous and next
  }
}
