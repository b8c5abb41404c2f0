import { useEffect, useState } from "preact/hooks";
import type { Shareable } from "../client/share.ts";

/** Whether the browser has a share sheet at all (client/share.ts tells files from links). */
const canShare = () => typeof navigator.share === "function";

/**
 * "Share": the phone's share sheet with the original file (client/share.ts), or its link where
 * files cannot be shared. Rendered only where the browser has a share sheet (after hydration:
 * the server cannot know), so desktops keep just the copy buttons.
 */
export function ShareButton({ item, class: className, label }: {
  item: Shareable;
  class?: string;
  /** The accessible name, when "Share" alone is not enough (one of many cards). */
  label?: string;
}) {
  const [available, setAvailable] = useState(false);
  const [status, setStatus] = useState("");
  useEffect(() => {
    setAvailable(canShare());
  }, []);
  if (!available) return null;
  const share = async () => {
    setStatus("");
    try {
      // Loaded on first use (the library page's JavaScript budget, routes/mod_test.ts).
      await (await import("../client/share.ts")).shareImage(item);
    } catch {
      setStatus("Could not share");
    }
  };
  return (
    <>
      <button type="button" class={className} aria-label={label} onClick={share}>
        Share
      </button>
      {status && <span role="status" class="status">{status}</span>}
    </>
  );
}
