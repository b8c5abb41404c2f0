/**
 * The costly anonymous reads go through a `ReadGate` (adapters/http/read_gate.ts), counted under
 * the client address the login limiter uses (a trusted proxy's forwarded address; an IPv6 client
 * by its /64).
 */
import type { Context } from "hono";
import type { Config } from "../adapters/config.ts";
import { limiterKey, resolveClientIp } from "../adapters/http/client_ip.ts";
import { peerAddress } from "../adapters/http/peer.ts";
import type { ReadGate } from "../adapters/http/read_gate.ts";

type Settings = Pick<Config, "LOGIN_TRUSTED_PROXY_IPS" | "LOGIN_CLIENT_IP_HEADER">;

/** Runs `read` once `gate` admits the request's client; refusals are the gate's errors. */
export async function throughGate<T>(
  gate: ReadGate,
  c: Context,
  config: Settings,
  read: () => Promise<T>,
): Promise<T> {
  const client = resolveClientIp(
    peerAddress(c),
    c.req.raw.headers,
    config.LOGIN_TRUSTED_PROXY_IPS,
    config.LOGIN_CLIENT_IP_HEADER,
  );
  using _slot = await gate.enter(limiterKey(client.ip));
  return await read();
}
