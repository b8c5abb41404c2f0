import { useEffect, useState } from "preact/hooks";
import { ApiError, apiJson } from "../client/api_client.ts";
import type { ImageDto } from "../domain/types.ts";
import { altText } from "../client/ui.ts";

/** A near-duplicate as the API lists it. */
export interface SimilarItem {
  image: ImageDto;
  distance: number;
}

/**
 * The near-duplicates of a fresh upload ("Looks like"), with one-click fixes for a signed-in
 * uploader: delete the new image, or merge its tags into an older one (which deletes the new).
 */
export function LooksLike({ shortId, onResolved }: {
  shortId: string;
  onResolved: (message: string, href: string | null) => void;
}) {
  const [items, setItems] = useState<SimilarItem[]>([]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const path = `/api/v1/images/${encodeURIComponent(shortId)}`;
  useEffect(() => {
    apiJson<{ items: SimilarItem[] }>(`${path}/similar?limit=5`)
      .then((r) => setItems(r.items))
      .catch(() => setItems([]));
  }, [shortId]);
  if (items.length === 0) return null;

  const act = async (run: () => Promise<unknown>, message: string, href: string | null) => {
    setBusy(true);
    setError("");
    try {
      await run();
      onResolved(message, href);
    } catch (err) {
      setBusy(false);
      setError(err instanceof ApiError ? err.message : "Network error, try again");
    }
  };
  const remove = () => act(() => apiJson(path, { method: "DELETE" }), "Deleted the new copy", null);
  const merge = (other: string) =>
    act(
      () => apiJson(`${path}/merge-into/${encodeURIComponent(other)}`, { method: "POST" }),
      `Tags merged into ${other}`,
      `/i/${other}`,
    );

  return (
    <div class="looks-like">
      <span class="label">Looks like</span>
      <ul>
        {items.map(({ image, distance }) => (
          <li key={image.short_id}>
            <a href={`/i/${image.short_id}`} title={`${distance} bits apart`}>
              <img src={image.thumbnail_url} alt={altText(image)} width={64} height={64} />
            </a>
            <button type="button" disabled={busy} onClick={() => merge(image.short_id)}>
              Merge tags into this
            </button>
          </li>
        ))}
      </ul>
      <button type="button" class="danger" disabled={busy} onClick={remove}>
        Delete the new one
      </button>
      {error && <span class="status">{error}</span>}
    </div>
  );
}
