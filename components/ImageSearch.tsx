import { useState } from "preact/hooks";
import {
  firstImage,
  IMAGE_TYPES,
  type ImageMatch,
  searchByImage,
} from "../client/search_by_image.ts";
import { rememberResults } from "../client/results.ts";
import { altText } from "../lib/ui.ts";

/**
 * Search by image for the library's search field: an image pasted or dropped on the field, or
 * chosen with the camera button (phones offer the camera and the gallery), shows the images on
 * the board that look like it. `onPaste` and `onDrop` go on the search form; `button` inside it,
 * `results` after it.
 */
export function useImageSearch() {
  const [state, setState] = useState<
    | { kind: "idle" }
    | { kind: "busy"; name: string }
    | { kind: "done"; items: ImageMatch[] }
    | { kind: "failed"; message: string }
  >({ kind: "idle" });

  const run = async (file: File | null) => {
    if (!file) return;
    setState({ kind: "busy", name: file.name });
    const outcome = await searchByImage(file);
    if (outcome.ok) {
      rememberResults({ kind: "image", label: "Looks like" }, outcome.items.map((m) => m.image));
    }
    setState(
      outcome.ok ? { kind: "done", items: outcome.items } : {
        kind: "failed",
        message: outcome.message,
      },
    );
  };

  const onPaste = (e: ClipboardEvent) => {
    const file = firstImage(e.clipboardData?.files);
    if (file) (e.preventDefault(), run(file));
  };
  const onDrop = (e: DragEvent) => {
    const file = firstImage(e.dataTransfer?.files);
    if (file) (e.preventDefault(), run(file));
  };
  const onDragOver = (e: DragEvent) => {
    if (e.dataTransfer?.types.includes("Files")) e.preventDefault();
  };

  const button = (
    <label class="button image-search-button" title="Search by image">
      <svg viewBox="0 0 24 24" width="18" height="18" aria-hidden="true">
        <path
          fill="currentColor"
          d="M9 3 7.2 5H4a2 2 0 0 0-2 2v11a2 2 0 0 0 2 2h16a2 2 0 0 0 2-2V7a2 2 0 0 0-2-2h-3.2L15 3H9Zm3 5a4.5 4.5 0 1 1 0 9 4.5 4.5 0 0 1 0-9Zm0 2a2.5 2.5 0 1 0 0 5 2.5 2.5 0 0 0 0-5Z"
        />
      </svg>
      <span class="visually-hidden">Search by image</span>
      <input
        type="file"
        accept={IMAGE_TYPES}
        class="visually-hidden"
        onChange={(e) => {
          run(firstImage(e.currentTarget.files));
          e.currentTarget.value = "";
        }}
      />
    </label>
  );

  const results = state.kind === "idle"
    ? null
    : (
      <section class="image-search" aria-live="polite" aria-label="Search by image">
        {state.kind === "busy" && <p class="muted">Looking for images like {state.name}…</p>}
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
        <button type="button" class="link-button" onClick={() => setState({ kind: "idle" })}>
          Close
        </button>
      </section>
    );
  return { onPaste, onDrop, onDragOver, button, results };
}
