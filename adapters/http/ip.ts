/**
 * IP addresses and CIDR ranges (IPv4 and IPv6) without dependencies: parsing, normalising
 * IPv4-mapped IPv6 to IPv4, and membership tests for the trusted-proxy list.
 */

/** A parsed address: 4 bytes for IPv4, 16 for IPv6. */
export type IpBytes = Uint8Array;

/** A CIDR range such as 10.0.0.0/8 or 2001:db8::/32; a single address is a full-length prefix. */
export interface Cidr {
  bytes: IpBytes;
  prefix: number;
  text: string;
}

function parseV4(s: string): IpBytes | null {
  const parts = s.split(".");
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    if (!/^(0|[1-9]\d{0,2})$/.test(parts[i])) return null;
    const n = Number(parts[i]);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseV6(input: string): IpBytes | null {
  let s = input;
  if (s.includes("%")) s = s.slice(0, s.indexOf("%")); // zone index
  if (!/^[0-9a-fA-F:.]+$/.test(s)) return null;
  const halves = s.split("::");
  if (halves.length > 2) return null;
  const groups = (part: string): number[] | null => {
    if (part === "") return [];
    const out: number[] = [];
    const items = part.split(":");
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (i === items.length - 1 && item.includes(".")) {
        const v4 = parseV4(item);
        if (!v4) return null;
        out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return null;
        out.push(parseInt(item, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0]);
  const tail = halves.length === 2 ? groups(halves[1]) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return null;
  const all = [...head, ...new Array(halves.length === 2 ? missing : 0).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

/** Parses an IPv4 or IPv6 address; IPv4-mapped IPv6 (::ffff:a.b.c.d) becomes its IPv4 address. */
export function parseIp(text: string): IpBytes | null {
  const s = text.trim().replace(/^\[(.*)\]$/, "$1");
  if (s === "") return null;
  const v4 = parseV4(s);
  if (v4) return v4;
  const v6 = parseV6(s);
  if (!v6) return null;
  const mapped = v6.slice(0, 10).every((b) => b === 0) && v6[10] === 0xff && v6[11] === 0xff;
  return mapped ? v6.slice(12) : v6;
}

/** The canonical text of an address (IPv4 dotted, IPv6 lower-case and compressed). */
export function formatIp(bytes: IpBytes): string {
  if (bytes.length === 4) return bytes.join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push((bytes[i] << 8) | bytes[i + 1]);
  let best = -1, bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen && j - i > 1) [best, bestLen] = [i, j - i];
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best < 0) return hex.join(":");
  return `${hex.slice(0, best).join(":")}::${hex.slice(best + bestLen).join(":")}`;
}

/** Normalises an address to its canonical text, or null when it is not an address. */
export function normalizeIp(text: string): string | null {
  const bytes = parseIp(text);
  return bytes ? formatIp(bytes) : null;
}

/** Parses one IP or CIDR; throws with a message naming the bad entry. */
export function parseCidr(text: string): Cidr {
  const [addr, prefixText, extra] = text.trim().split("/");
  const bytes = parseIp(addr);
  if (!bytes || extra !== undefined) throw new Error(`"${text.trim()}" is not an IP or CIDR`);
  const bits = bytes.length * 8;
  let prefix = bits;
  if (prefixText !== undefined) {
    if (!/^\d{1,3}$/.test(prefixText)) throw new Error(`"${text.trim()}" has a bad prefix`);
    // An IPv4-mapped range like ::ffff:10.0.0.0/104 is its IPv4 range /8.
    const mapped = bytes.length === 4 && addr.includes(":");
    prefix = Number(prefixText) - (mapped ? 96 : 0);
    if (prefix < 0 || prefix > bits) throw new Error(`"${text.trim()}" has a bad prefix`);
  }
  return { bytes, prefix, text: `${formatIp(bytes)}/${prefix}` };
}

/** Parses a comma- or space-separated list of IPs and CIDRs. */
export function parseCidrList(text: string): Cidr[] {
  return text.split(/[\s,]+/).filter((s) => s !== "").map(parseCidr);
}

/** True when `ip` lies inside `range` (families must match). */
export function cidrContains(range: Cidr, ip: IpBytes): boolean {
  if (range.bytes.length !== ip.length) return false;
  let bits = range.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if ((range.bytes[i] & mask) !== (ip[i] & mask)) return false;
  }
  return true;
}

/** True when `ip` lies inside any of `ranges`. */
export function inAnyCidr(ranges: readonly Cidr[], ip: IpBytes): boolean {
  return ranges.some((r) => cidrContains(r, ip));
}
