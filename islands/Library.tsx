import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { TagInput } from "../components/TagInput.tsx";
import { apiJson, useToken } from "../client/api_client.ts";
import type { Star as StarType } from "../components/Star.tsx";
import type { ImageDto, ImagePage } from "../domain/types.ts";
import { altText, libraryHref } from "../client/ui.ts";
import { directPath, movingBadge } from "../domain/share_links.ts";
import { useCopier } from "../components/CopyFeedback.tsx";
import { ShareButton } from "../components/ShareButton.tsx";
import { useImageSearch } from "../components/ImageSearch.tsx";
import { rememberResults } from "../client/results_store.ts";

/**
 * Thumbnails loaded at once rather than lazily: the first rows, the page's largest paint on a
 * phone (bench B15, Lighthouse's largest-contentful-paint); the first at a high priority.
 */
const EAGER_THUMBNAILS = 4;

/** What a card needs of an image (the server sends only this, to keep the page small). */
export type Card = Pick<
  ImageDto,
  | "short_id"
  | "content_type"
  | "thumbnail_url"
  | "preview_url"
  | "width"
  | "height"
  | "tags"
  | "text"
>;

/** Props: the first page, rendered on the server, and the search it was read with. */
export interface LibraryProps {
  initial: { items: Card[]; next_cursor: string | null };
  tags: string[];
  /** Words searched in the captions ("" for none). */
  q: string;
  /** Only this person's uploads (`?uploader=`), or "" for everyone's. */
  uploader?: string;
  /** `relevance`: the best match first (only with `q`). */
  sort?: "newest" | "relevance";
  limit: number;
  /**
   * PUBLIC_BASE_URL, the origin of copied links; null: this page's own (the page is kept
   * rendered for everyone, so the origin of one request cannot be in it).
   */
  publicBaseUrl: string | null;
}

/**
 * The library grid with its search field (tags and caption words, domain/search_text.ts); loads
 * further pages by keyset cursor on scroll.
 */
export default function Library(
  { initial, tags, q, uploader = "", sort = "newest", limit, publicBaseUrl }: LibraryProps,
) {
  const token = useToken();
  /** The shown images' favourite state for the signed-in person (absent: not known yet). */
  const [favs, setFavs] = useState<Record<string, boolean>>({});
  // The moving image whose animated preview plays (on hover or keyboard focus), never for a
  // reader who prefers reduced motion (issue 45).
  const [playing, setPlaying] = useState<string | null>(null);
  const play = (image: Card) => {
    if (!image.preview_url) return;
    if (globalThis.matchMedia?.("(prefers-reduced-motion: reduce)").matches) return;
    setPlaying(image.short_id);
  };
  const stop = (image: Card) => setPlaying((now) => now === image.short_id ? null : now);
  // The star's code loads only for signed-in people: most visitors never need it.
  const [Star, setStar] = useState<typeof StarType | null>(null);
  const [items, setItems] = useState<Card[]>(initial.items);
  const [cursor, setCursor] = useState(initial.next_cursor);
  const [filter, setFilter] = useState([...tags, ...(q ? [q] : [])].join(", "));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const filterRef = useRef<HTMLInputElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const loading = useRef(false);
  const { copy, view } = useCopier("library");
  const copyLink = (card: Card) =>
    copy("link", (publicBaseUrl ?? location.origin) + directPath(card));
  const searching = tags.length > 0 || q !== "" || uploader !== "";
  const imageSearch = useImageSearch();
  // The image pages opened from here offer the previous and next of this list (PrevNext). Kept
  // as the list renders, before the page counts as hydrated, so that a tap right after load
  // already carries it (tests/browser/phone_test.ts, "moves through the library's results").
  useLayoutEffect(() => {
    rememberResults({ kind: "library", tags, q, sort }, items, cursor);
  }, [items, cursor]);

  // Stars for signed-in people: which of the shown images are their favourites.
  useEffect(() => {
    if (!token) return;
    if (!Star) import("../components/Star.tsx").then((m) => setStar(() => m.Star));
    const unknown = items.map((i) => i.short_id).filter((id) => !(id in favs)).slice(0, 200);
    if (!unknown.length) return;
    apiJson<{ short_ids: string[] }>(`/api/v1/me/favorites?among=${unknown.join(",")}`, {
      allow401: true,
    }).then(
      (r) =>
        setFavs((old) => ({
          ...old,
          ...Object.fromEntries(unknown.map((id) => [id, r.short_ids.includes(id)])),
        })),
      () => {},
    );
  }, [token, items]);

  /** The next page of this search, after `from`. */
  const loadMore = async (from: string) => {
    if (loading.current) return;
    loading.current = true;
    setBusy(true);
    setError(null);
    const params = new URLSearchParams({ limit: String(limit), cursor: from });
    if (tags.length) params.set("tags", tags.join(","));
    if (q) params.set("q", q);
    if (q && sort === "relevance") params.set("sort", "relevance");
    if (uploader) params.set("uploader", uploader);
    try {
      const page = await apiJson<ImagePage>(`/api/v1/images?${params}`);
      setItems((old) => [...old, ...page.items]);
      setCursor(page.next_cursor);
    } catch {
      setError("Could not load images.");
    } finally {
      loading.current = false;
      setBusy(false);
    }
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
      if (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) return;
      e.preventDefault();
      filterRef.current?.focus();
    };
    addEventListener("keydown", onKey);
    return () => removeEventListener("keydown", onKey);
  }, []);

  useEffect(() => {
    const el = sentinel.current;
    if (!el || !cursor || error) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) loadMore(cursor);
    }, { rootMargin: "800px" });
    observer.observe(el);
    return () => observer.disconnect();
  }, [cursor, error]);

  const described = [...tags, ...(q ? [`“${q}”`] : []), ...(uploader ? [`by ${uploader}`] : [])]
    .join(", ");
  return (
    <section class="library" aria-busy={busy}>
      {
        /* A plain GET form: the server tells tags from words and answers with the canonical
          address (routes/index.tsx), with or without scripts. */
      }
      <form
        class="filter"
        action="/"
        method="get"
        role="search"
        onPaste={imageSearch.onPaste}
        onDrop={imageSearch.onDrop}
        onDragOver={imageSearch.onDragOver}
      >
        <label for="tag-filter">
          Search tags and the words on images (<code>-tag</code> excludes) <kbd>/</kbd>
        </label>
        <TagInput
          id="tag-filter"
          name="search"
          value={filter}
          onValue={setFilter}
          inputRef={filterRef}
          placeholder="cat, surprised, this is fine"
        />
        <button type="submit">Search</button>
        {imageSearch.button}
        {searching && <a href="/">Clear</a>}
        <a href="/tags">Browse tags</a>
      </form>
      {q && !uploader && (
        <p class="sort">
          Order:{" "}
          <a href={libraryHref(tags, q)} aria-current={sort === "newest" ? "page" : undefined}>
            Newest
          </a>{" "}
          <a
            href={libraryHref(tags, q, null, "", "relevance")}
            aria-current={sort === "relevance" ? "page" : undefined}
          >
            Best match
          </a>
        </p>
      )}
      {imageSearch.results}
      {items.length === 0 && !busy && (
        <p class="empty">
          {searching ? `Nothing found for ${described}.` : "No images yet."}{" "}
          <a href="/upload">Upload one</a>
        </p>
      )}
      <div class="copy-feedback">{view}</div>
      <ul class="grid">
        {items.map((image, i) => (
          <li key={image.short_id}>
            <a
              href={`/i/${image.short_id}`}
              class={movingBadge(image) ? "moving" : undefined}
              onMouseEnter={() => play(image)}
              onMouseLeave={() => stop(image)}
              onFocus={() => play(image)}
              onBlur={() => stop(image)}
            >
              <img
                src={playing === image.short_id && image.preview_url
                  ? image.preview_url
                  : image.thumbnail_url}
                width={image.width}
                height={image.height}
                loading={i < EAGER_THUMBNAILS ? "eager" : "lazy"}
                fetchpriority={i === 0 ? "high" : undefined}
                decoding="async"
                alt={altText(image)}
                title={image.text || undefined}
              />
              {movingBadge(image) && <span class="moving-badge">{movingBadge(image)}</span>}
            </a>
            <button
              type="button"
              class="card-copy"
              title="Copy link"
              aria-label={`Copy link to ${altText(image)}`}
              onClick={() => copyLink(image)}
            >
              Copy link
            </button>
            {token && Star && image.short_id in favs && (
              <Star
                class="card-star"
                shortId={image.short_id}
                on={favs[image.short_id]}
                label={altText(image)}
                onChange={(on) => setFavs((old) => ({ ...old, [image.short_id]: on }))}
              />
            )}
            <ShareButton
              class="card-share"
              label={`Share ${altText(image)}`}
              item={{
                path: directPath(image),
                name: directPath(image).slice(1),
                type: image.content_type,
                link: (publicBaseUrl ?? "") + directPath(image),
              }}
            />
          </li>
        ))}
      </ul>
      <div ref={sentinel} class="more">
        {error && <p role="alert">{error}</p>}
        {cursor && (
          <a
            class="button"
            href={libraryHref(tags, q, cursor, uploader, sort)}
            onClick={(e) => (e.preventDefault(), loadMore(cursor))}
          >
            {busy ? "Loading…" : "Load more"}
          </a>
        )}
      </div>
    </section>
  );
}
