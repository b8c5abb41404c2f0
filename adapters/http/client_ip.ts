/**
 * Which address a request comes from, for the login limiter
 * (docs/deployment.md#behind-a-reverse-proxy-or-load-balancer): the socket peer, unless the peer is
 * a trusted proxy; then a valid `X-Real-IP` wins, else `X-Forwarded-For` read from the right,
 * skipping trusted proxies. With LOGIN_CLIENT_IP_HEADER=x-forwarded-for, `X-Real-IP` is never read:
 * cloud load balancers (AWS ALB, Google's, Azure's) pass a client's own `X-Real-IP` through
 * unchanged, so believing it let a client choose the address it was counted under. Pure functions
 * only.
 */
import { type Cidr, formatIp, inAnyCidr, type IpBytes, parseIp } from "./ip.ts";

/** The header a trusted proxy names the client in (LOGIN_CLIENT_IP_HEADER). */
export type ClientIpHeader = "x-real-ip" | "x-forwarded-for";

/** Where the client address was taken from. */
export type ClientIpSource = "peer" | "x-real-ip" | "x-forwarded-for" | "unknown";

/** A resolved client address (canonical text) and where it came from. */
export interface ClientIp {
  ip: string;
  source: ClientIpSource;
}

/** The key used when the peer address is not known at all (no socket address, a unix socket). */
export const UNKNOWN_CLIENT = "unknown";

/** Anything with `get(name)`, such as `Headers`. */
export interface HeaderReader {
  get(name: string): string | null | undefined;
}

/** Parses one forwarded entry: a bare address, `[v6]`, `[v6]:port` or `a.b.c.d:port`. */
export function parseForwardedAddress(entry: string): IpBytes | null {
  const s = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d{1,5})?$/.exec(s);
  if (bracketed) return parseIp(bracketed[1]);
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d{1,5}$/.exec(s);
  return parseIp(v4WithPort ? v4WithPort[1] : s);
}

/**
 * The client address of `X-Forwarded-For` (several header lines count as one list): read from the
 * right, trusted proxies are skipped and the first untrusted entry is the client; when every entry
 * is trusted, the leftmost one. An invalid entry ends the list (whoever wrote it is not trusted,
 * so nothing to its left can be believed). Null when there is no valid rightmost entry.
 */
export function clientFromForwardedFor(
  header: string,
  trusted: readonly Cidr[],
): IpBytes | null {
  const entries = header.split(",");
  let leftmostTrusted: IpBytes | null = null;
  for (let i = entries.length - 1; i >= 0; i--) {
    const ip = parseForwardedAddress(entries[i]);
    if (!ip) break;
    if (!inAnyCidr(trusted, ip)) return ip;
    leftmostTrusted = ip;
  }
  return leftmostTrusted;
}

/**
 * Resolves the client address of a request from its socket `peer` (text, possibly IPv4-mapped
 * IPv6), its `headers` and the trusted proxy ranges. From an untrusted peer both forwarding
 * headers are ignored; invalid header values are ignored. `header` says whether a trusted
 * proxy's `X-Real-IP` is believed first (SPEC's default) or never.
 */
export function resolveClientIp(
  peer: string | null | undefined,
  headers: HeaderReader,
  trusted: readonly Cidr[],
  header: ClientIpHeader = "x-real-ip",
): ClientIp {
  const peerIp = peer ? parseIp(peer) : null;
  if (!peerIp) return { ip: UNKNOWN_CLIENT, source: "unknown" };
  if (!inAnyCidr(trusted, peerIp)) return { ip: formatIp(peerIp), source: "peer" };
  const realIp = header === "x-real-ip" ? headers.get("x-real-ip") : null;
  const real = realIp ? parseForwardedAddress(realIp) : null;
  if (real) return { ip: formatIp(real), source: "x-real-ip" };
  const forwardedFor = headers.get("x-forwarded-for");
  const forwarded = forwardedFor ? clientFromForwardedFor(forwardedFor, trusted) : null;
  if (forwarded) return { ip: formatIp(forwarded), source: "x-forwarded-for" };
  return { ip: formatIp(peerIp), source: "peer" };
}

/**
 * The key the login limiter counts a client address under: an IPv4 address as it is, an IPv6
 * address by its /64 network (`2001:db8:1:2::/64`). One IPv6 host is given a whole /64 (every
 * cloud VM has one), so counting per /128 gave it unlimited attempts, and the limiter's table
 * grew at the request rate. IPv4-mapped addresses were already read as IPv4.
 */
export function limiterKey(ip: string): string {
  const bytes = parseIp(ip);
  if (!bytes || bytes.length === 4) return ip;
  const network = new Uint8Array(16);
  network.set(bytes.subarray(0, 8));
  return `${formatIp(network)}/64`;
}

/**
 * A gate that opens at most once per `intervalMs` (for warnings that would otherwise be written
 * on every request). `clock` is injectable for tests.
 */
export function throttle(intervalMs: number, clock: () => number = Date.now): () => boolean {
  let next = -Infinity;
  return () => {
    const now = clock();
    if (now < next) return false;
    next = now + intervalMs;
    return true;
  };
}
