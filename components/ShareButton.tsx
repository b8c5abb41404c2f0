import { useEffect, useState } from "preact/hooks";
import { type Shareable, shareImage, shareSupport } from "../client/share.ts";

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
    setAvailable(shareSupport(new File([], item.name, { type: item.type })) !== "none");
  }, [item.name, item.type]);
  if (!available) return null;
  const share = async () => {
    setStatus("");
    try {
      await shareImage(item);
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
