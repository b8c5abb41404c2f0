/**
 * The list an image page was opened from (a library search, or a search by image), kept in
 * sessionStorage so the image page can offer the previous and next image of it
 * (islands/PrevNext.tsx). Per tab, like the history it stands for. Browser-only.
 */
import type { ImagePage } from "../domain/types.ts";
import {
  KEY,
  MAX_IDS,
  rememberResults,
  type Results,
  type ResultsSearch,
} from "./results_store.ts";

export { rememberResults, type Results, type ResultsSearch };

/** The remembered list, or null. */
export function readResults(): Results | null {
  try {
    const value = JSON.parse(sessionStorage.getItem(KEY) ?? "null");
    return value && Array.isArray(value.ids) && value.search ? value as Results : null;
  } catch {
    return null;
  }
}

/** The images before and after `id` in `results` (null at either end, or when absent). */
export function neighbours(results: Results, id: string) {
  const at = results.ids.indexOf(id);
  if (at < 0) return null;
  return {
    position: at + 1,
    prev: at > 0 ? results.ids[at - 1] : null,
    next: at < results.ids.length - 1 ? results.ids[at + 1] : null,
  };
}

/** The library search's next page appended to `results` (and remembered). */
export async function loadMoreResults(results: Results, limit = 50): Promise<Results> {
  if (results.search.kind !== "library" || !results.nextCursor) return results;
  const params = new URLSearchParams({ limit: String(limit), cursor: results.nextCursor });
  if (results.search.tags.length) params.set("tags", results.search.tags.join(","));
  if (results.search.q) params.set("q", results.search.q);
  if (results.search.sort === "relevance") params.set("sort", "relevance");
  const res = await fetch(`/api/v1/images?${params}`, { headers: { Accept: "application/json" } });
  if (!res.ok) return results;
  const page = await res.json() as ImagePage;
  const ids = [...results.ids, ...page.items.map((i) => i.short_id)];
  const more = { search: results.search, ids: ids.slice(0, MAX_IDS), nextCursor: page.next_cursor };
  try {
    sessionStorage.setItem(KEY, JSON.stringify(more));
  } catch {
    // as above
  }
  return more;
}
