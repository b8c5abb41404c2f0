import { useEffect, useState } from "preact/hooks";
import {
  clearSharedItems,
  readSharedItems,
  type SharedItems,
  suggestedTags,
} from "../client/offline_cache.ts";
import { formatBytes } from "../client/ui.ts";

/** The upload page's view of a share (`?shared=1` or `?share=...`). */
export interface SharedState {
  items: SharedItems | null;
  /** Why a share did not arrive, when it did not. */
  note: string;
  taken: boolean;
}

const NOTES: Record<string, string> = {
  unavailable: "The shared images did not arrive: the board was not yet installed in this " +
    "browser. Open the board once, then share again, or choose the files below.",
  failed: "The shared images could not be read. Share them again, or choose them below.",
};

/**
 * Reads what was shared into the board (client/offline_cache.ts) once the page is `ready`, and
 * gives the tags its text suggests to `onTags` in the same update that shows the files, so the
 * tag field is never empty beside them (phone_test.ts "a share-target POST lands ...").
 */
export function useSharedFiles(
  ready: boolean,
  onTags: (tags: string) => void,
): SharedState & { take(): File[] } {
  const [state, setState] = useState<SharedState>({
    items: null,
    note: "",
    taken: false,
  });
  useEffect(() => {
    if (!ready) return;
    const params = new URLSearchParams(location.search);
    const problem = params.get("share");
    if (problem) setState((s) => ({ ...s, note: NOTES[problem] ?? NOTES.failed }));
    if (params.get("shared") !== "1") return;
    readSharedItems().then((items) => {
      if (!items || items.files.length === 0) return;
      const tags = suggestedTags(items.title, items.text).join(", ");
      if (tags) onTags(tags);
      setState((s) => ({ ...s, items }));
    }, () => setState((s) => ({ ...s, note: NOTES.failed })));
  }, [ready]);
  return {
    ...state,
    take() {
      const files = state.items?.files ?? [];
      clearSharedItems().catch(() => {});
      setState((s) => ({ ...s, items: null, taken: true }));
      return files;
    },
  };
}

/**
 * The files shared into the board, waiting for their tags: the tag field above already holds the
 * share's suggestions, and one button sends them all.
 */
export function SharedFiles({ state, onSend }: {
  state: ReturnType<typeof useSharedFiles>;
  onSend: (files: File[]) => void;
}) {
  if (state.note && !state.items) return <p class="note" role="status">{state.note}</p>;
  const items = state.items;
  if (!items) return null;
  const n = items.files.length;
  return (
    <section class="shared-files" aria-label="Shared images">
      <p>
        {n === 1 ? "One image was shared" : `${n} images were shared`} with the board
        {items.dropped > 0 && ` (${items.dropped} more were left out: at most 20 at a time)`}. Check
        the tags, then send {n === 1 ? "it" : "them"}.
      </p>
      <ul>
        {items.files.map((f, i) => (
          <li key={i}>
            {f.name} <span class="muted">{formatBytes(f.size)}</span>
          </li>
        ))}
      </ul>
      <button type="button" class="primary" onClick={() => onSend(state.take())}>
        Upload {n === 1 ? "the shared image" : `${n} shared images`}
      </button>
    </section>
  );
}
