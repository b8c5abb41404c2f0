import { useState } from "preact/hooks";
import { api } from "../client/api_client.ts";

/** Props of the favourite star. */
export interface StarProps {
  shortId: string;
  /** Whether the signed-in person has favourited it. */
  on: boolean;
  onChange: (on: boolean) => void;
  /** What the image is, for the button's accessible name. */
  label?: string;
  class?: string;
}

/**
 * The favourite star (a toggle button, for signed-in people): `PUT` or `DELETE
 * /api/v1/me/favorites/{id}`; the state turns only when the service said yes.
 */
export function Star({ shortId, on, onChange, label, class: cls }: StarProps) {
  const [busy, setBusy] = useState(false);
  const toggle = async () => {
    setBusy(true);
    try {
      const res = await api(`/api/v1/me/favorites/${encodeURIComponent(shortId)}`, {
        method: on ? "DELETE" : "PUT",
      });
      if (res.ok) onChange(!on);
    } finally {
      setBusy(false);
    }
  };
  const what = label ? ` ${label}` : "";
  return (
    <button
      type="button"
      class={`star${cls ? ` ${cls}` : ""}`}
      aria-pressed={on}
      aria-label={on ? `Favourite${what} (press to remove)` : `Add${what} to favourites`}
      title={on ? "Remove from favourites" : "Add to favourites"}
      disabled={busy}
      onClick={toggle}
    >
      <span aria-hidden="true">{on ? "★" : "☆"}</span>
    </button>
  );
}
