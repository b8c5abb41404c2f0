/** The islands' side of search by image (POST /api/v1/images/search-by-image). Browser-only. */
import { api } from "./api_client.ts";
import type { ImageDto } from "../domain/types.ts";

/** An image on the board that looks like the query, `distance` bits apart. */
export interface ImageMatch {
  image: ImageDto;
  distance: number;
}

/** The outcome of one search: the matches, or why there are none. */
export type SearchOutcome =
  | { ok: true; items: ImageMatch[] }
  | { ok: false; message: string; retryAfter?: number };

/** Searches the board for images that look like `file`, at most `maxDistance` bits apart. */
export async function searchByImage(file: File, maxDistance?: number): Promise<SearchOutcome> {
  const form = new FormData();
  form.append("file", file, file.name || "image");
  const query = maxDistance === undefined ? "" : `?max_distance=${maxDistance}`;
  let res: Response;
  try {
    res = await api(`/api/v1/images/search-by-image${query}`, { method: "POST", body: form });
  } catch {
    return { ok: false, message: "Network error, try again" };
  }
  const body = await res.json().catch(() => null);
  if (res.ok && Array.isArray(body?.items)) return { ok: true, items: body.items };
  if (res.status === 429) {
    const retryAfter = Number(res.headers.get("Retry-After")) || undefined;
    return {
      ok: false,
      message: `Too many image searches; try again in ${retryAfter ?? 60} s`,
      retryAfter,
    };
  }
  if (res.status === 413) return { ok: false, message: "That image is too large to search by" };
  if (res.status === 415) return { ok: false, message: "Not an image the board can read" };
  return {
    ok: false,
    message: typeof body?.detail === "string" ? body.detail : `Search failed (${res.status})`,
  };
}
