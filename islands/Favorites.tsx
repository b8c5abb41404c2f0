import { useEffect, useState } from "preact/hooks";
import { Star } from "../components/Star.tsx";
import { apiJson, useToken } from "../client/api_client.ts";
import type { ImageDto, ImagePage } from "../domain/types.ts";
import { altText, loginHref } from "../client/ui.ts";

/** `/favorites`: your favourite images, most recently favourited first, with their stars. */
export default function Favorites() {
  const token = useToken();
  const [items, setItems] = useState<ImageDto[] | null>(null);
  const [removed, setRemoved] = useState<Record<string, boolean>>({});
  const [cursor, setCursor] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = async (from: string | null) => {
    setBusy(true);
    try {
      const page = await apiJson<ImagePage>(
        `/api/v1/me/favorites?limit=50${from ? `&cursor=${encodeURIComponent(from)}` : ""}`,
      );
      setItems((old) => from && old ? [...old, ...page.items] : page.items);
      setCursor(page.next_cursor);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => {
    if (token) load(null).catch(() => setItems([]));
  }, [token]);
  if (!token) {
    return (
      <p>
        <a href={loginHref("/favorites")}>Sign in</a> to see your favourites.
      </p>
    );
  }
  if (!items) return <p>Loading…</p>;
  if (!items.length) {
    return <p class="empty">No favourites yet: star images in the library or on their page.</p>;
  }
  return (
    <section class="library" aria-busy={busy}>
      <ul class="grid">
        {items.map((image) => (
          <li key={image.short_id}>
            <a href={`/i/${image.short_id}`}>
              <img
                src={image.thumbnail_url}
                width={image.width}
                height={image.height}
                loading="lazy"
                decoding="async"
                alt={altText(image)}
              />
            </a>
            <Star
              class="card-star"
              shortId={image.short_id}
              on={!removed[image.short_id]}
              label={altText(image)}
              onChange={(on) => setRemoved((old) => ({ ...old, [image.short_id]: !on }))}
            />
          </li>
        ))}
      </ul>
      {cursor && (
        <div class="more">
          <button type="button" disabled={busy} onClick={() => load(cursor)}>
            {busy ? "Loading…" : "Load more"}
          </button>
        </div>
      )}
    </section>
  );
}
