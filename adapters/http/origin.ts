/**
 * The origin of links meant for others (previews, oEmbed, the copy buttons): PUBLIC_BASE_URL when
 * set; otherwise the request's own, where `X-Forwarded-Proto` counts only from a
 * LOGIN_TRUSTED_PROXY_IPS peer, and `X-Forwarded-Host` only from such a peer and with
 * TRUST_FORWARDED_HOST: a proxy that passes a client's own `X-Forwarded-Host` on (nginx does,
 * unless told to set it) let any client choose the host previews advertise
 * (tests/forwarded_test.ts).
 */
import type { Context } from "hono";
import type { Config } from "../config.ts";
import {
  type Cidr,
  type HeaderReader,
  inAnyCidr,
  parseHostHeader,
  parseIp,
  peerAddress,
} from "../http/mod.ts";

/** What origin resolution needs of the configuration. */
export interface OriginSettings {
  /** PUBLIC_BASE_URL, already an origin (adapters/config.ts checks and normalises it). */
  publicBaseUrl?: string;
  /** LOGIN_TRUSTED_PROXY_IPS. */
  trustedProxies: readonly Cidr[];
  /** TRUST_FORWARDED_HOST: a trusted proxy's `X-Forwarded-Host` is believed (default false). */
  trustForwardedHost?: boolean;
}

/** The origin settings of a configuration. */
export function originSettings(
  config: Pick<Config, "PUBLIC_BASE_URL" | "LOGIN_TRUSTED_PROXY_IPS" | "TRUST_FORWARDED_HOST">,
): OriginSettings {
  return {
    publicBaseUrl: config.PUBLIC_BASE_URL,
    trustedProxies: config.LOGIN_TRUSTED_PROXY_IPS,
    trustForwardedHost: config.TRUST_FORWARDED_HOST,
  };
}

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
  const host = settings.trustForwardedHost ? firstValue(headers, "x-forwarded-host") : null;
  const scheme = proto === "http" || proto === "https" ? proto : own.protocol.slice(0, -1);
  const authority = host && parseHostHeader(host) ? host.toLowerCase() : own.host;
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
