import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { ClipboardRefused, copyImageAsPng, copyText } from "../client/clipboard.ts";

/** What the user asked to copy, and how to copy it by hand if the browser refuses. */
interface Fallback {
  label: string;
  text: string;
}

/**
 * Copying with feedback, for islands: `copy()` and `copyImage()` confirm in a status line, and
 * where the Clipboard API is refused they show the text in a selected, read-only field to copy
 * by hand. `view` renders both; place it once near the buttons.
 */
export function useCopier(idPrefix: string) {
  const [status, setStatus] = useState("");
  const [fallback, setFallback] = useState<Fallback | null>(null);
  const field = useRef<HTMLInputElement>(null);
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(timer.current), []);
  // In the render that shows the field, so that Ctrl+C pressed at once copies its text.
  useLayoutEffect(() => {
    field.current?.focus();
    field.current?.select();
  }, [fallback]);

  const confirm = (text: string) => {
    setFallback(null);
    setStatus(text);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setStatus(""), 4000);
  };
  const refused = (e: unknown, what: Fallback) => {
    if (!(e instanceof ClipboardRefused)) throw e;
    clearTimeout(timer.current);
    setStatus("");
    setFallback(what);
  };

  /** Copies `text`; `what` names it in the confirmation ("link", "Markdown"). */
  const copy = async (what: string, text: string) => {
    try {
      await copyText(text);
      confirm(`Copied ${what}`);
    } catch (e) {
      refused(e, {
        label: `Your browser did not allow copying. Copy the ${what} from here:`,
        text,
      });
    }
  };

  /** Copies the image at `url` as PNG; the GIF note says that its animation is not kept. */
  const copyImage = async (url: string, link: string, gif: boolean) => {
    setStatus("Copying image…");
    try {
      await copyImageAsPng(url);
      confirm(
        gif ? "Copied image as a still PNG (the GIF's animation is not kept)" : "Copied image",
      );
    } catch (e) {
      if (!(e instanceof ClipboardRefused)) {
        setStatus(`Could not copy the image: ${(e as Error).message}`);
        return;
      }
      refused(e, {
        label: "Your browser did not allow copying the image. Copy its link from here:",
        text: link,
      });
    }
  };

  const id = `${idPrefix}-copy-fallback`;
  const view = (
    <>
      <span role="status" class="status">{status}</span>
      {fallback && (
        <div class="copy-fallback">
          <label for={id}>{fallback.label}</label>
          <input
            id={id}
            ref={field}
            type="text"
            readOnly
            value={fallback.text}
            onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
          />
          <button type="button" class="link-button" onClick={() => setFallback(null)}>
            Close
          </button>
        </div>
      )}
    </>
  );
  return { copy, copyImage, view };
}
