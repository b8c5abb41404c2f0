/**
 * `POST /auth/token`: sign in with an account's credential (JSON or form fields, so Swagger
 * UI's OAuth2 password flow works) and get a bearer token. A sign-in posted by another site's page
 * is refused first (adapters/http/cross_site.ts); then the per-address login lock is checked before
 * the credentials, and every outcome is recorded in the database (db/login_limiter.ts).
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { LoginLimiter, loginLimits } from "../db/login_limiter.ts";
import {
  isCrossSite,
  limiterKey,
  peerAddress,
  resolveClientIp,
  throttle,
} from "../adapters/http/mod.ts";
import { originOf, originSettings } from "../adapters/http/origin.ts";
import type { Config } from "../adapters/config.ts";
import type { Services } from "../services/deps.ts";
import { asAppError } from "../domain/errors.ts";
import { HttpError } from "./errors.ts";
import { newRouter } from "./router.ts";
import { accounts } from "./permissions.ts";
import { errorResponse } from "./schemas.ts";

const json = <T>(schema: T) => ({ "application/json": { schema } });
const required = (what: string) => ({
  error: (issue: { input?: unknown }) =>
    issue.input === undefined ? "is required" : `must be a ${what}`,
});
const Credentials = z.object({
  username: z.string(required("string")).min(1, "must not be empty").max(256, "is too long"),
  password: z.string(required("string")).min(1, "must not be empty").max(1024, "is too long"),
}).openapi("LoginRequest");
type Credentials = z.infer<typeof Credentials>;

const Token = z.object({
  access_token: z.string(),
  token_type: z.literal("bearer"),
  expires_in: z.number().int().openapi({ description: "Seconds until the token expires" }),
}).openapi("AccessToken");
const Locked = z.object({
  code: z.literal("login_locked"),
  detail: z.string(),
  retry_after: z.number().int(),
}).openapi("LoginLocked");

/** The credential fields of a JSON, urlencoded or multipart body; 422 when missing or malformed. */
async function readCredentials(c: Context): Promise<Credentials> {
  const type = (c.req.header("content-type") ?? "").split(";")[0].trim().toLowerCase();
  let body: unknown;
  try {
    if (/^application\/([\w.-]+\+)?json$/.test(type)) body = await c.req.json();
    else if (type === "application/x-www-form-urlencoded" || type === "multipart/form-data") {
      body = await c.req.parseBody({ all: true });
    } else {
      throw new HttpError(422, "Send username and password as JSON or as form fields");
    }
  } catch (e) {
    throw asAppError(e, "invalid_field", "The request body is not valid JSON or form data");
  }
  const result = Credentials.safeParse(body);
  if (result.success) return result.data;
  const detail = result.error.issues
    .map((i) => (i.path.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message))
    .join("; ");
  throw new HttpError(422, detail);
}

const body = { schema: { $ref: "#/components/schemas/LoginRequest" } };
const route = createRoute({
  method: "post",
  path: "/auth/token",
  operationId: "createToken",
  tags: ["auth"],
  summary: "Sign in and get a bearer token",
  description: "Too many failed attempts from one address lock it for LOGIN_COOLDOWN_SECONDS. " +
    "A sign-in sent by another site's page (`Sec-Fetch-Site: cross-site`, or an `Origin` that " +
    "is not the board's) is refused with 403 before it is counted.",
  request: {
    body: {
      required: true,
      content: {
        "application/json": body,
        "application/x-www-form-urlencoded": body,
        "multipart/form-data": body,
      },
    },
  },
  responses: {
    200: { description: "Signed in", content: json(Token) },
    401: errorResponse("Incorrect username or password"),
    403: errorResponse("Sent by a page of another site (`code`: `cross_site_login`)"),
    413: errorResponse("Body over 64 KiB (`code`: `body_too_large`)"),
    422: errorResponse("Missing or malformed fields"),
    429: {
      description: "Too many failed attempts from this address",
      headers: { "Retry-After": { schema: { type: "integer" }, description: "Seconds" } },
      content: json(Locked),
    },
  },
});

/** The 429 of a locked address: `Retry-After` and a structured body. */
function lockedError(config: Config): HttpError {
  const seconds = config.LOGIN_COOLDOWN_SECONDS;
  return new HttpError(429, {
    code: "login_locked",
    detail: "Too many failed sign-in attempts; try again later",
    retry_after: seconds,
  }, { headers: { "Retry-After": String(seconds) } });
}

/**
 * The 403 of a sign-in posted by another site's page: refused before anything is read or counted,
 * so no web page can lock its visitors' address (tests/auth_cross_site_test.ts).
 */
const crossSiteError = () =>
  new HttpError(403, {
    code: "cross_site_login",
    detail: "Sign-in requests from other sites are refused; sign in on the board's own pages",
  });

/** The login route, with its limiter. */
export function authRoutes(services: Services) {
  const { config } = services;
  const people = accounts(services);
  const limiter = new LoginLimiter(services.sql, loginLimits(config));
  const mayWarn = throttle(60_000);
  const origins = originSettings(config);
  const router = newRouter();
  router.openAPIRegistry.register("LoginRequest", Credentials);
  return router.openapi(route, async (c) => {
    const log = c.get("log") ?? services.log;
    if (isCrossSite(c.req.raw.headers, originOf(c, origins))) throw crossSiteError();
    const { username, password } = await readCredentials(c);
    const client = resolveClientIp(
      peerAddress(c),
      c.req.raw.headers,
      config.LOGIN_TRUSTED_PROXY_IPS,
      config.LOGIN_CLIENT_IP_HEADER,
    );
    if (
      client.source === "x-forwarded-for" && config.LOGIN_CLIENT_IP_HEADER === "x-real-ip" &&
      mayWarn()
    ) {
      log.warn(
        "client address taken from X-Forwarded-For; have the proxy set X-Real-IP, or set " +
          "LOGIN_CLIENT_IP_HEADER=x-forwarded-for if it never does",
        { ip: client.ip },
      );
    }
    const ip = limiterKey(client.ip);
    if (await limiter.isLocked(ip)) throw lockedError(config);
    const user = await people.signIn(username, password);
    if (!user) {
      const { failures, locked } = await limiter.recordFailure(ip);
      const fields = { ip, address: client.ip, failures };
      if (locked) log.warn("login failed; address locked", fields);
      else log.info("login failed", fields);
      if (locked) throw lockedError(config);
      throw new HttpError(401, "Incorrect username or password", {
        headers: { "WWW-Authenticate": "Bearer" },
      });
    }
    if ((await limiter.recordSuccess(ip)).locked) throw lockedError(config);
    log.info("login succeeded", { ip, user: user.username });
    c.header("Cache-Control", "no-store");
    c.header("Pragma", "no-cache");
    return c.json(await people.issue(user), 200);
  });
}
