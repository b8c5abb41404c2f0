/** The socket peer of a request, as Hono's Deno adapter reports it. */
import type { Context } from "hono";
import { getConnInfo } from "hono/deno";

/**
 * The peer's address; null when the request came with no socket address (`app.request`).
 * serve.ts hands it on in the shape of `Deno.serve`'s, from node:http too.
 */
export function peerAddress(c: Context): string | null {
  try {
    return getConnInfo(c).remote.address ?? null;
  } catch {
    return null; // no socket address (not served over a socket)
  }
}
