import { useEffect, useState } from "preact/hooks";
import { type ImageMatch, searchByImage } from "../client/search_by_image.ts";
import { rememberResults } from "../client/results.ts";
import { altText } from "../client/ui.ts";

/**
 * The outcome of one search by image (components/ImageSearch.tsx): "Looks like" with the images
 * on the board, nearest first (remembered as the list their image pages move through), that
 * nothing looks like it, or why the search failed (429 included).
 */
export function ImageSearchPanel({ file, onClose }: { file: File; onClose: () => void }) {
  const [state, setState] = useState<
    | { kind: "busy" }
    | { kind: "done"; items: ImageMatch[] }
    | { kind: "failed"; message: string }
  >({ kind: "busy" });
  useEffect(() => {
    setState({ kind: "busy" });
    searchByImage(file).then((outcome) => {
      if (!outcome.ok) return setState({ kind: "failed", message: outcome.message });
      rememberResults({ kind: "image", label: "Looks like" }, outcome.items.map((m) => m.image));
      setState({ kind: "done", items: outcome.items });
    });
  }, [file]);
  return (
    <section class="image-search" aria-live="polite" aria-label="Search by image">
      {state.kind === "busy" && <p class="muted">Looking for images like {file.name}…</p>}
      {state.kind === "failed" && <p role="alert">{state.message}</p>}
      {state.kind === "done" && state.items.length === 0 && (
        <p>Nothing on the board looks like this image.</p>
      )}
      {state.kind === "done" && state.items.length > 0 && (
        <>
          <h2 class="label">Looks like</h2>
          <ul class="grid">
            {state.items.map(({ image, distance }) => (
              <li key={image.short_id}>
                <a href={`/i/${image.short_id}`} title={`${distance} bits apart`}>
                  <img
                    src={image.thumbnail_url}
                    width={image.width}
                    height={image.height}
                    alt={altText(image)}
                  />
                </a>
              </li>
            ))}
          </ul>
        </>
      )}
      <button type="button" class="link-button" onClick={onClose}>Close</button>
    </section>
  );
}
