import { useState } from "preact/hooks";
import type { ComponentType } from "preact";

/** Image types the board takes (and so searches by). */
const IMAGE_TYPES = "image/jpeg,image/png,image/gif,image/webp,image/avif";

/** The first image file among `files`, if any. */
function firstImage(files: Iterable<File> | null | undefined): File | null {
  for (const file of files ?? []) if (file.type.startsWith("image/")) return file;
  return null;
}

type Panel = ComponentType<{ file: File; onClose: () => void }>;

/**
 * Search by image for the library's search field: an image pasted or dropped on the field, or
 * chosen with the camera button (phones offer the camera and the gallery), shows the images on
 * the board that look like it (components/ImageSearchPanel.tsx, loaded on first use so that the
 * library page's JavaScript stays within its budget: routes/mod_test.ts). `onPaste` and `onDrop`
 * go on the search form; `button` inside it, `results` after it.
 */
export function useImageSearch() {
  const [query, setQuery] = useState<{ file: File; Panel: Panel } | null>(null);
  const run = async (file: File | null) => {
    if (!file) return;
    const { ImageSearchPanel } = await import("./ImageSearchPanel.tsx");
    setQuery({ file, Panel: ImageSearchPanel });
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
      <span aria-hidden="true">📷</span>
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
  const results = query && (
    <query.Panel
      key={query.file}
      file={query.file}
      onClose={() => setQuery(null)}
    />
  );
  return { onPaste, onDrop, onDragOver, button, results };
}
