/**
 * The origin of links meant for others (previews, oEmbed, the copy buttons): PUBLIC_BASE_URL when
 * set; otherwise the request's own, where `X-Forwarded-Proto` and `X-Forwarded-Host` count only
 * from a LOGIN_TRUSTED_PROXY_IPS peer (anyone else could make the page advertise their host).
 */
import type { Context } from "hono";
import type { Config } from "../config.ts";
import { type Cidr, type HeaderReader, inAnyCidr, parseIp, peerAddress } from "../http/mod.ts";

/** What origin resolution needs of the configuration. */
export interface OriginSettings {
  /** PUBLIC_BASE_URL, already an origin (config.ts checks and normalises it). */
  publicBaseUrl?: string;
  /** LOGIN_TRUSTED_PROXY_IPS. */
  trustedProxies: readonly Cidr[];
}

/** The origin settings of a configuration. */
export function originSettings(
  config: Pick<Config, "PUBLIC_BASE_URL" | "LOGIN_TRUSTED_PROXY_IPS">,
): OriginSettings {
  return {
    publicBaseUrl: config.PUBLIC_BASE_URL,
    trustedProxies: config.LOGIN_TRUSTED_PROXY_IPS,
  };
}

/** A host with an optional port: a name, an IPv4 address or a bracketed IPv6 address. */
const HOST =
  /^(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/** The first value of a comma-separated forwarding header (the one the outermost proxy saw). */
function firstValue(headers: HeaderReader, name: string): string | null {
  const v = headers.get(name);
  return v ? v.split(",")[0].trim() : null;
}

/**
 * The origin for a request to `url` with `headers` from the socket peer `peer` (text, or null
 * when unknown): see the module comment. Invalid forwarded values are ignored one by one.
 */
export function resolveOrigin(
  url: string,
  headers: HeaderReader,
  peer: string | null,
  settings: OriginSettings,
): string {
  if (settings.publicBaseUrl) return settings.publicBaseUrl;
  const own = new URL(url);
  const peerIp = peer ? parseIp(peer) : null;
  if (!peerIp || !inAnyCidr(settings.trustedProxies, peerIp)) return own.origin;
  const proto = firstValue(headers, "x-forwarded-proto")?.toLowerCase();
  const host = firstValue(headers, "x-forwarded-host");
  const scheme = proto === "http" || proto === "https" ? proto : own.protocol.slice(0, -1);
  const authority = host && HOST.test(host) ? host.toLowerCase() : own.host;
  try {
    return new URL(`${scheme}://${authority}`).origin; // drops a default port
  } catch {
    return own.origin;
  }
}

/** The origin of the request in `c` (a Hono context). */
export function originOf(c: Context, settings: OriginSettings): string {
  return resolveOrigin(c.req.url, c.req.raw.headers, peerAddress(c), settings);
}
