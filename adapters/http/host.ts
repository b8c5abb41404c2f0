/**
 * The `Host` a request names, checked before anything routes it. Deno builds a request's URL from
 * its `Host` header as given, so `Host: board.example/other.png?` moved the path the router saw
 * (and `Host: a b` made a URL that `new URL` refuses: a 500 wherever the origin was read).
 * Only `host[:port]` is accepted: a DNS name, an IPv4 address or a bracketed IPv6 address, and a
 * port of 1-65535; with ALLOWED_HOSTS, only the names listed. Pure; tests/host_test.ts.
 */

const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const HOST_RE = new RegExp(
  `^(?:(${LABEL}(?:\\.${LABEL})*\\.?)|(\\[[0-9A-Fa-f:.]{2,45}\\]))(?::(\\d{1,5}))?$`,
);

/** The host name of a valid `host[:port]` (lower-case, no port, brackets kept), else null. */
export function parseHostHeader(value: string): string | null {
  const m = HOST_RE.exec(value);
  if (!m || value.length > 261) return null;
  if (m[3] !== undefined && (Number(m[3]) < 1 || Number(m[3]) > 65535)) return null;
  try {
    // The URL parser's form (an IPv6 address checked and compressed, IPv4 in dotted decimal).
    return new URL(`http://${m[1] ?? m[2]}/`).hostname.replace(/\.$/, "");
  } catch {
    return null;
  }
}

/**
 * Parses ALLOWED_HOSTS: comma-separated host names (a port is ignored, so none is written),
 * lower-cased; an empty list allows every valid host. Throws naming a bad entry.
 */
export function parseAllowedHosts(text: string): string[] {
  const names = text.split(",").map((s) => s.trim()).filter(Boolean);
  return names.map((name) => {
    const host = /^\[.*\]$/.test(name) || !name.includes(":") ? parseHostHeader(name) : null;
    if (!host) {
      throw new Error(`"${name}" is not a host name (write it without scheme, path or port)`);
    }
    return host;
  });
}

/**
 * Why the request with `host` (its `Host` header, null when absent) and `url` (Deno's request
 * URL) must be refused, or null when it may go on. A request without `Host` (HTTP/1.0) gets the
 * listener's own address from Deno, and is checked by that.
 */
export function hostProblem(
  host: string | null,
  url: string,
  allowed: readonly string[] = [],
): string | null {
  if (host !== null && parseHostHeader(host) === null) {
    return "The Host header must be a host name or address with an optional port";
  }
  let name: string;
  try {
    name = new URL(url).hostname.replace(/\.$/, "");
  } catch {
    return "The request's host and path do not form a valid URL";
  }
  if (allowed.length && !allowed.includes(name)) {
    return "This host is not served here (ALLOWED_HOSTS)";
  }
  return null;
}
