/**
 * The one require-auth check that every write route uses: a valid HS256 bearer token, or 401
 * with `WWW-Authenticate: Bearer` and `{"detail": ...}`. On success the token's `sub` is
 * available as `c.get("user")`.
 */
import type { MiddlewareHandler } from "hono";
import { verifyAccessToken } from "../services/auth.ts";
import type { Config } from "../adapters/config.ts";
import type { AppEnv } from "./env.ts";
import { AppError } from "../domain/errors.ts";

/** The bearer token of an `Authorization` header, or null when there is none. */
export function bearerToken(header: string | undefined): string | null {
  const match = /^Bearer[ ]+([^ ]+)[ ]*$/i.exec(header ?? "");
  return match ? match[1] : null;
}

/**
 * Middleware refusing a request without a valid bearer token (401, "Not authenticated" or
 * "Invalid or expired token"). Use it on every write route:
 * `createRoute({ ..., middleware: [requireAuth(config)] as const, security: [{ bearer: [] }] })`
 * or `router.post(path, requireAuth(config), handler)`.
 */
export function requireAuth(config: Pick<Config, "JWT_SECRET">): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const token = bearerToken(c.req.header("authorization"));
    // `unauthorized` answers with the challenge `WWW-Authenticate: Bearer` (domain/errors.ts).
    if (!token) throw new AppError("unauthorized", "Not authenticated");
    const sub = await verifyAccessToken(config, token);
    if (!sub) throw new AppError("unauthorized", "Invalid or expired token");
    c.set("user", sub);
    await next();
  };
}
