/**
 * HTTP plumbing shared by the entries (main.ts, reader.ts) and the routes: serving with a graceful
 * stop, the client address behind trusted proxies, and the two caches of the read path.
 *
 * - `serve.ts`: `listen` (node:http with client timeouts), `serveUntilSignal` (SIGINT/SIGTERM
 *   drain then stop).
 * - `client_ip.ts`, `ip.ts`: the login limiter's client address; IP and CIDR parsing.
 * - `peer.ts`: the socket peer of a request.
 * - `host.ts`: the `Host` a request names, checked before routing (and ALLOWED_HOSTS).
 * - `cross_site.ts`: whether a request was sent by another site's page (the login's CSRF check).
 * - `byte_cache.ts`: small stored objects kept in memory for the byte routes.
 * - `snapshot_cache.ts`: listings kept while the database's snapshot is unchanged.
 * - `last_resort.ts`: errors that escape everything are logged, never fatal.
 */
export {
  listen,
  type Listener,
  type ListenOptions,
  type ServeOptions,
  serveUntilSignal,
} from "./serve.ts";
export {
  type ClientIp,
  type ClientIpHeader,
  type HeaderReader,
  limiterKey,
  resolveClientIp,
  throttle,
} from "./client_ip.ts";
export { type Cidr, inAnyCidr, parseCidrList, parseIp } from "./ip.ts";
export { peerAddress } from "./peer.ts";
export { isCrossSite } from "./cross_site.ts";
export { hostProblem, parseAllowedHosts, parseHostHeader } from "./host.ts";
export { ByteCache } from "./byte_cache.ts";
export { SnapshotCache } from "./snapshot_cache.ts";
export { installLastResort, requestScope } from "./last_resort.ts";
