/** The socket peer of a request, as Hono's Deno adapter reports it. */
import type { Context } from "hono";
import { getConnInfo } from "hono/deno";

/** The peer's address; null when the request did not come through `Deno.serve` (`app.request`). */
export function peerAddress(c: Context): string | null {
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null; // no socket address (not served by Deno.serve)
  }
}
