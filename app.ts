/**
 * The whole HTTP surface of one service instance: request ids and access logs, the `/api/v1`
 * app, the docs, and the pages. `createApp(services)` is what main.ts serves and tests call.
 */
import { Hono } from "hono";
import { createApiApp } from "./api/mod.ts";
import { docsRoutes } from "./api/docs.ts";
import type { AppEnv } from "./api/env.ts";
import { onError } from "./api/errors.ts";
import type { Services } from "./lib/services.ts";

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,64}$/;

/** Builds the app for `services`; nothing here listens or starts anything. */
export function createApp(services: Services) {
  const { config, log } = services;
  const app = new Hono<AppEnv>();

  app.use(async (c, next) => {
    const given = c.req.header("x-request-id");
    const requestId = given && REQUEST_ID_RE.test(given) ? given : crypto.randomUUID();
    const reqLog = log.child({ request_id: requestId });
    c.set("requestId", requestId);
    c.set("log", reqLog);
    const started = performance.now();
    await next();
    c.header("X-Request-Id", requestId);
    reqLog.info("request", {
      method: c.req.method,
      path: c.req.path,
      status: c.res.status,
      ms: Math.round((performance.now() - started) * 10) / 10,
    });
  });

  const api = createApiApp(services);
  app.route("/api/v1", api);
  app.all("/api/*", (c) => c.json({ detail: "Not found" }, 404));
  if (config.API_DOCS_ENABLED) {
    app.route("/", docsRoutes(api, new URL("./node_modules/", import.meta.url)));
  }
  app.notFound((c) => c.json({ detail: "Not found" }, 404));
  app.onError(onError);
  return app;
}
