import { useLayoutEffect, useRef, useState } from "preact/hooks";
import {
  type Caption as CaptionFields,
  CaptionView,
  useCaption,
} from "../components/CaptionText.tsx";
import { ApiError, sendJson, useToken } from "../client/api_client.ts";
import type { ImageDto } from "../domain/types.ts";

/**
 * The words printed on an image (recognised, or written by hand), shown as soon as recognition
 * has read them; signed in, they can be corrected, or handed back to recognition.
 */
export default function Caption({ shortId, initial }: { shortId: string; initial: CaptionFields }) {
  const token = useToken();
  const [caption, setCaption] = useCaption(shortId, initial);
  const [editing, setEditing] = useState(false);
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState("");
  const area = useRef<HTMLTextAreaElement>(null);
  // Focused in the render that shows the editor, so no key pressed after "Edit caption" is lost.
  useLayoutEffect(() => {
    if (editing) area.current?.focus();
  }, [editing]);

  const send = async (text: string | null, done: string) => {
    setBusy(true);
    setMessage("");
    try {
      const image = await sendJson<ImageDto>(
        "PATCH",
        `/api/v1/images/${encodeURIComponent(shortId)}`,
        { text },
      );
      setCaption(image);
      setEditing(false);
      setMessage(done);
    } catch (err) {
      setMessage(err instanceof ApiError ? err.message : "Network error, caption not saved");
    } finally {
      setBusy(false);
    }
  };

  return (
    <section class="caption-box" aria-label="Words on the image">
      <h2>Words on it</h2>
      {editing
        ? (
          <form
            onSubmit={(e) => (e.preventDefault(), send(draft, "Caption saved"))}
            class="caption-editor"
          >
            <label for="edit-caption">The words printed on the image</label>
            <textarea
              id="edit-caption"
              ref={area}
              rows={3}
              maxLength={2000}
              value={draft}
              disabled={busy}
              onInput={(e) => setDraft(e.currentTarget.value)}
              onKeyDown={(e) => e.key === "Escape" && setEditing(false)}
            />
            <button type="submit" disabled={busy}>Save caption</button>
            <button type="button" onClick={() => setEditing(false)}>Cancel</button>
          </form>
        )
        : <CaptionView caption={caption} />}
      {token && !editing && (
        <div class="actions">
          <button
            type="button"
            onClick={() => {
              setDraft(caption.text ?? "");
              setEditing(true);
            }}
          >
            Edit caption
          </button>
          {caption.text_source === "manual" && (
            <button
              type="button"
              disabled={busy}
              onClick={() => send(null, "Reading it again…")}
            >
              Read it again
            </button>
          )}
        </div>
      )}
      <p role="status" class="status">{message}</p>
    </section>
  );
}
