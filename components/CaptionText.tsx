import { useEffect, useState } from "preact/hooks";
import { apiJson } from "../client/api_client.ts";
import type { ImageDto } from "../domain/types.ts";

/** Waits between looks at an image whose caption is still being read: 2 s, growing to 15 s. */
const FIRST_WAIT_MS = 2000;
const LONGEST_WAIT_MS = 15_000;
/** After this long, stop looking: recognition may be backed up; a reload looks again. */
const GIVE_UP_MS = 5 * 60_000;

/** The caption fields of an image. */
export type Caption = Pick<ImageDto, "text" | "text_source">;

/**
 * The caption of an image, kept current: while recognition has not run (`text` null) it asks the
 * API again, less and less often, until the words arrive, so a fresh upload shows them without a
 * reload.
 */
export function useCaption(shortId: string, initial: Caption): [Caption, (c: Caption) => void] {
  const [caption, setCaption] = useState<Caption>(initial);
  const waiting = caption.text === null;
  useEffect(() => {
    if (!waiting) return;
    let wait = FIRST_WAIT_MS;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const until = Date.now() + GIVE_UP_MS;
    const look = async () => {
      try {
        const image = await apiJson<ImageDto>(`/api/v1/images/${encodeURIComponent(shortId)}`);
        if (stopped) return;
        if (image.text !== null) return setCaption(image);
      } catch {
        // offline or deleted: try again later, within the same bound
      }
      wait = Math.min(wait * 1.5, LONGEST_WAIT_MS);
      if (!stopped && Date.now() < until) timer = setTimeout(look, wait);
    };
    timer = setTimeout(look, wait);
    return () => (stopped = true, clearTimeout(timer));
  }, [shortId, waiting]);
  return [caption, setCaption];
}

/** The caption as the page shows it: the words, "no words" or "being read". */
export function CaptionView({ caption }: { caption: Caption }) {
  if (caption.text === null) return <p class="caption muted">Reading the words on it…</p>;
  if (caption.text === "") return <p class="caption muted">No words found on it.</p>;
  return (
    <p class="caption">
      <q>{caption.text}</q>
      {caption.text_source === "manual" && <span class="muted">(written by hand)</span>}
    </p>
  );
}

/** The caption of an image, shown and kept current (a fresh upload's row). */
export function LiveCaption({ shortId, initial }: { shortId: string; initial: Caption }) {
  const [caption] = useCaption(shortId, initial);
  return <CaptionView caption={caption} />;
}
