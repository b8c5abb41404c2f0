/**
 * What every entry serves around its API: request ids and access logs, the `/api/v1` app, the
 * docs (when enabled and given), and the pages. main.ts and reader.ts compose it differently.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { Hono } from "hono";
import type { AppEnv } from "../api/env.ts";
import { onError } from "../api/errors.ts";
import { hostProblem, requestScope } from "../adapters/http/mod.ts";
import { handlingRequest } from "../adapters/event_loop.ts";
import type { Services } from "../services/deps.ts";

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** The parts an entry puts together. */
export interface ShellParts {
  api: OpenAPIHono<AppEnv>;
  docs?: (api: OpenAPIHono<AppEnv>) => Hono<AppEnv>;
  /** Routes at the root before the pages (the direct image links). */
  direct?: Hono<AppEnv>;
  pages?: Hono;
}

/**
 * Builds the app; nothing here listens or starts anything. A request whose `Host` is not a valid
 * host[:port] (or not in ALLOWED_HOSTS) is answered 400 before any route sees it
 * (tests/host_test.ts).
 */
export function createShell(
  services: Pick<Services, "log"> & Partial<Pick<Services, "config">>,
  parts: ShellParts,
) {
  const allowedHosts = services.config?.ALLOWED_HOSTS ?? [];
  const app = new Hono<AppEnv>();
  app.use(async (c, next) => {
    const given = c.req.header("x-request-id");
    const requestId = given && REQUEST_ID_RE.test(given) ? given : crypto.randomUUID();
    const reqLog = services.log.child({ request_id: requestId });
    c.set("requestId", requestId);
    c.set("log", reqLog);
    const started = performance.now();
    const badHost = hostProblem(c.req.header("host") ?? null, c.req.url, allowedHosts);
    if (badHost) c.res = c.json({ detail: badHost }, 400);
    else {
      // Uploads read and send their bodies in steps that pause for other requests (adapters/event_loop.ts).
      using _handling = handlingRequest();
      await requestScope.run(reqLog, next);
    }
    c.header("X-Request-Id", requestId);
    // Every answer, JSON errors of the byte routes included, is to be taken as its declared type.
    c.header("X-Content-Type-Options", "nosniff");
    reqLog.info("request", {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  });
  app.route("/api/v1", parts.api);
  app.all("/api/*", (c) => c.json({ detail: "Not found" }, 404));
  if (parts.docs) app.route("/", parts.docs(parts.api));
  if (parts.direct) app.route("/", parts.direct);
  if (parts.pages) app.route("/", parts.pages);
  app.notFound((c) => c.json({ detail: "Not found" }, 404));
  app.onError(onError);
  return app;
}
