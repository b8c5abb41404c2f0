import { useEffect, useRef, useState } from "preact/hooks";
import { TagInput } from "../components/TagInput.tsx";
import { apiJson } from "../lib/api_client.ts";
import type { ImageDto, ImagePage } from "../lib/types.ts";
import { parseFilterText } from "../lib/tags/names.ts";
import { altText, libraryHref } from "../lib/ui.ts";
import { directPath } from "../lib/sharing/links.ts";
import { useCopier } from "../components/CopyFeedback.tsx";

/** What a card needs of an image (the server sends only this, to keep the page small). */
export type Card = Pick<
  ImageDto,
  "short_id" | "content_type" | "thumbnail_url" | "width" | "height" | "tags"
>;

/** Props: the first page, rendered on the server, and the filter it was read with. */
export interface LibraryProps {
  initial: { items: Card[]; next_cursor: string | null };
  tags: string[];
  limit: number;
  /**
   * PUBLIC_BASE_URL, the origin of copied links; null: this page's own (the page is kept
   * rendered for everyone, so the origin of one request cannot be in it).
   */
  publicBaseUrl: string | null;
}

/** The library grid with its tag filter; loads further pages by keyset cursor on scroll. */
export default function Library(
  { initial, tags: initialTags, limit, publicBaseUrl }: LibraryProps,
) {
  const [tags, setTags] = useState(initialTags);
  const [items, setItems] = useState<Card[]>(initial.items);
  const [cursor, setCursor] = useState(initial.next_cursor);
  const [filter, setFilter] = useState(initialTags.join(", "));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const filterRef = useRef<HTMLInputElement>(null);
  const sentinel = useRef<HTMLDivElement>(null);
  const loading = useRef(false);
  const seq = useRef(0);
  const { copy, view } = useCopier("library");
  const copyLink = (card: Card) =>
    copy("link", (publicBaseUrl ?? location.origin) + directPath(card));

  const load = async (forTags: string[], from: string | null) => {
    if (loading.current && from) return;
    const mine = ++seq.current;
    loading.current = true;
    setBusy(true);
    setError(null);
    const q = new URLSearchParams({ limit: String(limit) });
    if (forTags.length) q.set("tags", forTags.join(","));
    if (from) q.set("cursor", from);
    try {
      const page = await apiJson<ImagePage>(`/api/v1/images?${q}`);
      if (mine !== seq.current) return;
      setItems((old) => from ? [...old, ...page.items] : page.items);
      setCursor(page.next_cursor);
    } catch {
      if (mine === seq.current) setError("Could not load images.");
    } finally {
      if (mine === seq.current) {
        loading.current = false;
        setBusy(false);
      }
    }
  };

  const applyFilter = (next: string[], push = true) => {
    setTags(next);
    setFilter(next.join(", "));
    if (push) history.pushState(null, "", libraryHref(next));
    load(next, null);
  };

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (e.key !== "/" || e.ctrlKey || e.metaKey || e.altKey) return;
      if (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) return;
      e.preventDefault();
      filterRef.current?.focus();
    };
    const onPop = () =>
      applyFilter(parseFilterText(new URL(location.href).searchParams.get("tags")), false);
    addEventListener("keydown", onKey);
    addEventListener("popstate", onPop);
    return () => {
      removeEventListener("keydown", onKey);
      removeEventListener("popstate", onPop);
    };
  }, []);

  useEffect(() => {
    const el = sentinel.current;
    if (!el || !cursor || error) return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((e) => e.isIntersecting)) load(tags, cursor);
    }, { rootMargin: "800px" });
    observer.observe(el);
    return () => observer.disconnect();
  }, [cursor, tags, error]);

  return (
    <section class="library" aria-busy={busy}>
      <form
        class="filter"
        action="/"
        method="get"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          applyFilter(parseFilterText(filter));
        }}
      >
        <label for="tag-filter">
          Filter by tags (<code>-tag</code> excludes) <kbd>/</kbd>
        </label>
        <TagInput
          id="tag-filter"
          name="tags"
          value={filter}
          onValue={setFilter}
          inputRef={filterRef}
          placeholder="cat, surprised"
        />
        <button type="submit">Filter</button>
        {tags.length > 0 && (
          <a href="/" onClick={(e) => (e.preventDefault(), applyFilter([]))}>Clear</a>
        )}
        <a href="/tags">Browse tags</a>
      </form>
      {items.length === 0 && !busy && (
        <p class="empty">
          {tags.length ? `No images tagged ${tags.join(", ")}.` : "No images yet."}{" "}
          <a href="/upload">Upload one</a>
        </p>
      )}
      <div class="copy-feedback">{view}</div>
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
            <button
              type="button"
              class="card-copy"
              title="Copy link"
              aria-label={`Copy link to ${altText(image)}`}
              onClick={() => copyLink(image)}
            >
              Copy link
            </button>
          </li>
        ))}
      </ul>
      <div ref={sentinel} class="more">
        {error && <p role="alert">{error}</p>}
        {cursor && (
          <a
            class="button"
            href={`${libraryHref(tags)}${tags.length ? "&" : "?"}cursor=${
              encodeURIComponent(cursor)
            }`}
            onClick={(e) => (e.preventDefault(), load(tags, cursor))}
          >
            {busy ? "Loading…" : "Load more"}
          </a>
        )}
      </div>
    </section>
  );
}
