import { useEffect, useState } from "preact/hooks";
import { loadMoreResults, neighbours, readResults, type Results } from "../client/results.ts";

/** Pixels a horizontal swipe must cover, and the most it may drift vertically. */
const SWIPE_X = 60;
const SWIPE_Y = 50;

/**
 * The previous and next image of the search this image page was opened from (client/results.ts):
 * links, the arrow keys, and a swipe on a touch screen. Nothing when the page was opened
 * otherwise (a shared link).
 */
export default function PrevNext({ shortId }: { shortId: string }) {
  const [results, setResults] = useState<Results | null>(null);
  useEffect(() => {
    const found = readResults();
    if (!found || !neighbours(found, shortId)) return;
    setResults(found);
    // At the end of what the library had loaded: fetch its next page for "Next".
    if (!neighbours(found, shortId)!.next && found.nextCursor) {
      loadMoreResults(found).then(setResults, () => {});
    }
  }, [shortId]);
  const near = results ? neighbours(results, shortId) : null;

  useEffect(() => {
    if (!near) return;
    const go = (id: string | null) => id && location.assign(`/i/${id}`);
    const onKey = (e: KeyboardEvent) => {
      const t = e.target as HTMLElement;
      if (e.ctrlKey || e.metaKey || e.altKey || e.shiftKey) return;
      if (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)) return;
      if (e.key === "ArrowLeft") go(near.prev);
      if (e.key === "ArrowRight") go(near.next);
    };
    let start: { x: number; y: number } | null = null;
    const onStart = (e: TouchEvent) => {
      start = e.touches.length === 1 ? { x: e.touches[0].clientX, y: e.touches[0].clientY } : null;
    };
    const onEnd = (e: TouchEvent) => {
      const end = e.changedTouches[0];
      if (!start || !end) return;
      const dx = end.clientX - start.x, dy = end.clientY - start.y;
      start = null;
      if (Math.abs(dx) < SWIPE_X || Math.abs(dy) > SWIPE_Y) return;
      go(dx > 0 ? near.prev : near.next); // a swipe to the left brings the next image
    };
    addEventListener("keydown", onKey);
    addEventListener("touchstart", onStart, { passive: true });
    addEventListener("touchend", onEnd);
    return () => {
      removeEventListener("keydown", onKey);
      removeEventListener("touchstart", onStart);
      removeEventListener("touchend", onEnd);
    };
  }, [results, shortId]);

  if (!results || !near) return null;
  const search = results.search;
  const label = search.kind === "image"
    ? search.label
    : [...search.tags, ...(search.q ? [`“${search.q}”`] : [])].join(", ") || "Library";
  return (
    <nav class="prev-next" aria-label="Results">
      {near.prev ? <a href={`/i/${near.prev}`} rel="prev">← Previous</a> : <span />}
      <span class="muted">
        {near.position} of {results.ids.length}
        {results.nextCursor ? "+" : ""} in {label}
      </span>
      {near.next ? <a href={`/i/${near.next}`} rel="next">Next →</a> : <span />}
    </nav>
  );
}
