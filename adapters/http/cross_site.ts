/**
 * Whether a request was sent by a page of another site, from the headers a browser sets and no
 * page script can: `Sec-Fetch-Site` and `Origin`. A form post needs no CORS preflight, so without
 * this check any web page could make its visitors' browsers post to the service.
 *
 * - `Sec-Fetch-Site: cross-site` is refused; `same-origin` is believed (the browser compared the
 *   origins itself, so a proxy that changes the scheme or host cannot make it wrong).
 * - Otherwise an `Origin` that is present and not `ownOrigin` is refused (`null` included: a
 *   sandboxed frame or a privacy-hiding redirect).
 * - A request with neither header (curl, scripts, older browsers' same-origin GETs) is not.
 *
 * Pure; tested in tests/auth_cross_site_test.ts.
 */
import type { HeaderReader } from "./client_ip.ts";

/** True when the request with `headers` comes from a page outside `ownOrigin` (see above). */
export function isCrossSite(headers: HeaderReader, ownOrigin: string): boolean {
  const site = headers.get("sec-fetch-site")?.trim().toLowerCase();
  if (site === "cross-site") return true;
  if (site === "same-origin") return false;
  const origin = headers.get("origin")?.trim();
  return origin !== undefined && origin !== null && origin.toLowerCase() !== ownOrigin;
}
