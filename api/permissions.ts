/**
 * Who may call which route: ROUTE_RULES, one row per route that is not a public read, and
 * `guard`, the middleware that route registration takes from it. A route missing here cannot be
 * registered with a guard, and tests/accounts_roles_test.ts walks the registered routes and fails
 * for any write without a row. A refusal for role, scope or ownership is 403 `forbidden`.
 */
import type { MiddlewareHandler } from "hono";
import { ownsOrAdmin, type Principal, refusal, type Rule } from "../domain/accounts.ts";
import { getImageUploaderId } from "../db/users.ts";
import { AppError } from "../domain/errors.ts";
import type { Services } from "../services/deps.ts";
import { isShortId } from "../domain/short_id.ts";
import { Accounts } from "../services/accounts.ts";
import type { AppEnv } from "./env.ts";
import { bearerToken } from "./require_auth.ts";

const PUBLIC: Rule = { public: true };
const SESSION: Rule = { role: "member", keys: "refused" };
const ADMIN: Rule = { role: "admin", keys: "refused" };
const ADMIN_EDIT: Rule = { role: "admin", keys: "edit" };

/**
 * Every route that is not a public read, and what it needs. A member uploads, edits tags and
 * captions of any image, deletes and merges only its own uploads; tag rules, users, invites and
 * the audit log are an admin's. A key acts within its scopes and never manages accounts, keys,
 * passwords or invites.
 */
export const ROUTE_RULES = {
  "POST /auth/token": PUBLIC,
  "POST /invites/:code/accept": PUBLIC,
  // A read that takes a file, so a POST: public like the listing, limited per address instead.
  "POST /images/search-by-image": PUBLIC,
  // Chat webhooks (api/chat.ts): verified by the platform's signature instead of a token.
  "POST /chat/discord": PUBLIC,
  "POST /chat/slack": PUBLIC,
  "POST /chat/slack/actions": PUBLIC,
  "POST /chat/telegram": PUBLIC,
  "POST /images": { role: "member", keys: "upload" },
  "PATCH /images/:id/tags": { role: "member", keys: "edit" },
  "PATCH /images/:id": { role: "member", keys: "edit" },
  "DELETE /images/:id": { role: "member", keys: "delete", owner: "id" },
  "POST /images/:id/merge-into/:other": { role: "member", keys: "delete", owner: "id" },
  "PUT /tag-aliases/:alias": ADMIN_EDIT,
  "DELETE /tag-aliases/:alias": ADMIN_EDIT,
  "PUT /tag-implications/:tag": ADMIN_EDIT,
  "DELETE /tag-implications/:tag": ADMIN_EDIT,
  "PATCH /tags/:name": ADMIN_EDIT,
  "GET /me": { role: "member", keys: "any" },
  "PATCH /me/password": SESSION,
  "POST /me/sign-out-everywhere": SESSION,
  "GET /me/api-keys": SESSION,
  "POST /me/api-keys": SESSION,
  "DELETE /me/api-keys/:id": SESSION,
  "GET /me/favorites": { role: "member", keys: "any" },
  // A copy on the image page counted as a send (api/sends.ts), once a day per account.
  "POST /images/:id/sends": { role: "member", keys: "any" },
  "PUT /me/favorites/:id": { role: "member", keys: "edit" },
  "DELETE /me/favorites/:id": { role: "member", keys: "edit" },
  "GET /users": ADMIN,
  "PATCH /users/:username": ADMIN,
  "GET /invites": ADMIN,
  "POST /invites": ADMIN,
  "DELETE /invites/:code": ADMIN,
  "GET /audit": ADMIN,
} as const satisfies Record<string, Rule>;

/** A route of the table: "METHOD /path" with Hono's `:param`s. */
export type RouteKey = keyof typeof ROUTE_RULES;

const accountsOf = new WeakMap<Services, Accounts>();

/** The accounts service of `services`, one per service instance. */
export function accounts(services: Services): Accounts {
  let found = accountsOf.get(services);
  if (!found) {
    found = new Accounts(services);
    accountsOf.set(services, found);
  }
  return found;
}

/** The principal that `guard` authenticated (a route behind a non-public rule only). */
export function principal(c: { get(key: "principal"): Principal | undefined }): Principal {
  const p = c.get("principal");
  if (!p) throw new AppError("unauthorized", "Not authenticated");
  return p;
}

/**
 * The middleware of route `key`: 401 without a valid token or key, 403 `forbidden` when the
 * caller's role, key scopes or ownership of the image do not allow it. A route whose image does
 * not exist goes on to its handler, which answers 404.
 */
export function guard(services: Services, key: RouteKey): MiddlewareHandler<AppEnv> {
  const rule: Rule = ROUTE_RULES[key];
  if (rule.public) return async (_c, next) => await next();
  const who = accounts(services);
  return async (c, next) => {
    const token = bearerToken(c.req.header("authorization"));
    // `unauthorized` answers with the challenge `WWW-Authenticate: Bearer` (domain/errors.ts).
    if (!token) throw new AppError("unauthorized", "Not authenticated");
    const p = await who.authenticate(token);
    if (!p) throw new AppError("unauthorized", "Invalid or expired token");
    const why = refusal(p, rule);
    if (why) throw new AppError("forbidden", why);
    if (rule.owner && p.role !== "admin") {
      const id = c.req.param(rule.owner) ?? "";
      const uploader = isShortId(id) ? await getImageUploaderId(services.sql, id) : undefined;
      if (uploader !== undefined && !ownsOrAdmin(p, uploader)) {
        throw new AppError("forbidden", "Only its uploader or an admin may do this");
      }
    }
    c.set("principal", p);
    c.set("user", p.username);
    await next();
  };
}
