/**
 * `/invites`: an admin creates, lists and withdraws invites; anyone holding a code accepts it
 * (`POST /invites/{code}/accept`), which creates the account and signs it in. Accepting is
 * limited per address by the sign-in limiter: an unknown, used or expired code counts as a
 * failed attempt.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { MAX_PASSWORD_LENGTH, ROLES } from "../domain/accounts.ts";
import type { InviteRow } from "../db/invites.ts";
import { LoginLimiter, loginLimits } from "../db/login_limiter.ts";
import { errorCode } from "../domain/errors.ts";
import { limiterKey, peerAddress, resolveClientIp } from "../adapters/http/mod.ts";
import type { Services } from "../services/deps.ts";
import { originOf, originSettings } from "../adapters/http/origin.ts";
import { AppError } from "../domain/errors.ts";
import { json } from "./images.ts";
import { accounts, guard, principal } from "./permissions.ts";
import { newRouter } from "./router.ts";
import { bearer, errorResponse } from "./schemas.ts";

/** An open invite. */
export const Invite = z.object({
  code: z.string(),
  url: z.string().openapi({ example: "https://reactions.example.com/invite/Xy3..." }),
  role: z.enum(ROLES),
  expires_at: z.string().openapi({ format: "date-time" }),
}).openapi("Invite");

const NewInvite = z.object({
  role: z.enum(ROLES).default("member"),
  expires_in_hours: z.number().int().min(1).max(24 * 365).default(168),
}).strict().openapi("NewInvite");

const Acceptance = z.object({
  username: z.string().max(64).openapi({ example: "alice" }),
  password: z.string().max(MAX_PASSWORD_LENGTH),
}).strict().openapi("InviteAcceptance");

const codeParam = z.object({
  code: z.string().max(64).openapi({ param: { name: "code", in: "path" } }),
});
const adminOnly = errorResponse("Not an admin, or sent with an API key (`forbidden`)");

/** The invite routes. */
export function inviteRoutes(services: Services) {
  const { config } = services;
  const people = accounts(services);
  const limiter = new LoginLimiter(services.sql, loginLimits(config));
  const sharing = originSettings(config);
  const app = newRouter();
  const dto = (origin: string, row: InviteRow) => ({
    code: row.code,
    url: `${origin}/invite/${row.code}`,
    role: row.role,
    expires_at: row.expires_at.toISOString(),
  });

  app.openapi(
    createRoute({
      method: "post",
      path: "/invites",
      operationId: "createInvite",
      tags: ["accounts"],
      summary: "Create an invite (a member's, valid 168 hours, unless the body says otherwise)",
      security: bearer,
      middleware: [guard(services, "POST /invites")] as const,
      request: { body: { content: { "application/json": { schema: NewInvite } } } },
      responses: {
        201: { description: "Created", content: json(Invite) },
        401: errorResponse("Not signed in"),
        403: adminOnly,
        422: errorResponse("Invalid fields"),
      },
    }),
    async (c) => {
      const parsed = NewInvite.safeParse(await c.req.json().catch(() => ({})));
      if (!parsed.success) {
        throw new AppError(
          "invalid_field",
          parsed.error.issues.map((i) => `${i.path.map(String).join(".")}: ${i.message}`)
            .join("; "),
        );
      }
      const body = parsed.data;
      const row = await people.createInvite(principal(c), body.role, body.expires_in_hours);
      c.header("Cache-Control", "no-store");
      return c.json(dto(originOf(c, sharing), row), 201);
    },
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/invites",
      operationId: "listInvites",
      tags: ["accounts"],
      summary: "Open invites (not used, not expired), newest first",
      security: bearer,
      middleware: [guard(services, "GET /invites")] as const,
      responses: {
        200: { description: "The invites", content: json(z.array(Invite)) },
        401: errorResponse("Not signed in"),
        403: adminOnly,
      },
    }),
    async (c) => {
      const origin = originOf(c, sharing);
      c.header("Cache-Control", "no-store");
      return c.json((await people.listInvites()).map((r) => dto(origin, r)), 200);
    },
  );
  app.openapi(
    createRoute({
      method: "delete",
      path: "/invites/{code}",
      operationId: "withdrawInvite",
      tags: ["accounts"],
      summary: "Withdraw an unused invite",
      security: bearer,
      middleware: [guard(services, "DELETE /invites/:code")] as const,
      request: { params: codeParam },
      responses: {
        204: { description: "Withdrawn" },
        401: errorResponse("Not signed in"),
        403: adminOnly,
        404: errorResponse("No such unused invite"),
      },
    }),
    async (c) => {
      if (!await people.withdrawInvite(principal(c), c.req.valid("param").code)) {
        throw new AppError("not_found", "No such invite");
      }
      return c.body(null, 204);
    },
  );
  app.openapi(
    createRoute({
      method: "post",
      path: "/invites/{code}/accept",
      operationId: "acceptInvite",
      tags: ["accounts"],
      summary: "Create the account an invite offers, and sign in",
      middleware: [guard(services, "POST /invites/:code/accept")] as const,
      request: {
        params: codeParam,
        body: { content: { "application/json": { schema: Acceptance } }, required: true },
      },
      responses: {
        201: {
          description: "Created and signed in",
          content: json(z.object({
            access_token: z.string(),
            token_type: z.literal("bearer"),
            expires_in: z.number().int(),
          })),
        },
        404: errorResponse("No such invite"),
        409: errorResponse("The name is taken (`username_taken`)"),
        410: errorResponse("Used (`invite_used`) or expired (`invite_expired`)"),
        422: errorResponse(
          "A name that is not 3-32 of a-z 0-9 _ . - (`invalid_username`), or a password under " +
            "10 characters (`weak_password`)",
        ),
        429: errorResponse("Too many failed attempts from this address (`login_locked`)"),
      },
    }),
    async (c) => {
      const { code } = c.req.valid("param");
      const { username, password } = c.req.valid("json");
      const client = resolveClientIp(
        peerAddress(c),
        c.req.raw.headers,
        config.LOGIN_TRUSTED_PROXY_IPS,
        config.LOGIN_CLIENT_IP_HEADER,
      );
      const ip = limiterKey(client.ip);
      if (await limiter.isLocked(ip)) throw locked(config.LOGIN_COOLDOWN_SECONDS);
      let user;
      try {
        user = await people.acceptInvite(code, username, password);
      } catch (e) {
        const code = errorCode(e);
        if (code === "not_found" || code === "invite_used" || code === "invite_expired") {
          if ((await limiter.recordFailure(ip)).locked) {
            throw locked(config.LOGIN_COOLDOWN_SECONDS);
          }
        }
        throw e;
      }
      c.get("log")?.info("invite accepted", { ip, user: user.username });
      c.header("Cache-Control", "no-store");
      return c.json(await people.issue(user), 201);
    },
  );
  return app;
}

function locked(seconds: number) {
  return new AppError(429, {
    code: "login_locked",
    detail: "Too many failed attempts; try again later",
    retry_after: seconds,
  }, { headers: { "Retry-After": String(seconds) } });
}
