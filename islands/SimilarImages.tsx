import { useEffect, useState } from "preact/hooks";
import type { SimilarItem } from "../components/LooksLike.tsx";
import { apiJson } from "../client/api_client.ts";
import { altText } from "../client/ui.ts";

/** "Similar images" on the detail page: the image's near-duplicates, nearest first. */
export default function SimilarImages({ shortId }: { shortId: string }) {
  const [items, setItems] = useState<SimilarItem[] | null>(null);
  useEffect(() => {
    apiJson<{ items: SimilarItem[] }>(
      `/api/v1/images/${encodeURIComponent(shortId)}/similar?limit=12`,
    ).then((r) => setItems(r.items)).catch(() => setItems([]));
  }, [shortId]);
  if (!items?.length) return null;
  return (
    <section class="similar" aria-labelledby="similar-heading">
      <h2 id="similar-heading">Similar images</h2>
      <ul>
        {items.map(({ image, distance }) => (
          <li key={image.short_id}>
            <a href={`/i/${image.short_id}`}>
              <img src={image.thumbnail_url} alt={altText(image)} width={120} height={120} />
            </a>
            <span class="muted">{distance === 0 ? "Same picture" : `${distance} bits apart`}</span>
          </li>
        ))}
      </ul>
    </section>
  );
}
