/**
 * The require-auth check: a valid bearer value (an HS256 access token or an API key), or 401 with
 * `WWW-Authenticate: Bearer` and `{"detail": ...}`. The service's routes use `guard` of
 * api/permissions.ts, which adds what each route needs; on success the principal is
 * `c.get("principal")` and its username `c.get("user")`.
 */
import type { MiddlewareHandler } from "hono";
import type { Principal } from "../domain/accounts.ts";
import type { AppEnv } from "./env.ts";
import { AppError } from "../domain/errors.ts";

/** The bearer token of an `Authorization` header, or null when there is none. */
export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header ?? "");
  return match ? match[1] : null;
}

/** Tells who a bearer value acts as (services/accounts.ts), or null when it is not valid now. */
export interface Authenticator {
  authenticate(bearer: string): Promise<Principal | null>;
}

/** Middleware refusing a request without a valid bearer value (401, "Not authenticated" or
 * "Invalid or expired token"). */
export function requireAuth(who: Authenticator): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c.req.header("authorization"));
    // `unauthorized` answers with the challenge `WWW-Authenticate: Bearer` (domain/errors.ts).
    if (!token) throw new AppError("unauthorized", "Not authenticated");
    const p = await who.authenticate(token);
    if (!p) throw new AppError("unauthorized", "Invalid or expired token");
    c.set("principal", p);
    c.set("user", p.username);
    await next();
  };
}
