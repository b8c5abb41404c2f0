/**
 * `/openapi.json`, `/docs` (Swagger UI) and `/redoc` (ReDoc). Their scripts and styles are served
 * by the service itself from the npm packages, never from a CDN, so the docs work offline. The
 * routes are only registered when API_DOCS_ENABLED is true; otherwise they answer 404.
 */
import type { OpenAPIHono } from "@hono/zod-openapi";
import { Hono } from "hono";
import type { AppEnv } from "./env.ts";

const ASSETS: Record<string, { pkg: string; file: string; type: string }> = {
  "swagger-ui.css": { pkg: "swagger-ui-dist", file: "swagger-ui.css", type: "text/css" },
  "swagger-ui-bundle.js": {
    pkg: "swagger-ui-dist",
    file: "swagger-ui-bundle.js",
    type: "text/javascript",
  },
  "redoc.standalone.js": {
    pkg: "redoc",
    file: "bundles/redoc.standalone.js",
    type: "text/javascript",
  },
};

// The page boot scripts are files too, so the docs need no inline script. Swagger UI keeps no
// copy of a pasted token (persistAuthorization off): signing out of the board must leave none in
// localStorage (docs_test.ts "Swagger UI is not told to keep its own copy of the token").
const SWAGGER_INIT = `window.ui = SwaggerUIBundle({
  url: "/openapi.json", dom_id: "#swagger-ui", deepLinking: true, persistAuthorization: false,
});`;

/**
 * The tightest policies the two UIs accept, measured in Chromium (tests/browser/docs_test.ts).
 * These pages are where a signed-in visitor pastes a token, so they must never be framed
 * (clickjacking) and may run only the service's own scripts. Swagger UI runs with styles from
 * files only; ReDoc injects its styles at run time (styled-components) and runs its search in a
 * Web Worker made from a blob. ReDoc's footer logo comes from cdn.redoc.ly and stays blocked.
 */
const policy = (extra: { style?: string; worker?: string } = {}) =>
  [
    "default-src 'none'",
    "script-src 'self'",
    `style-src 'self'${extra.style ? ` ${extra.style}` : ""}`,
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    ...(extra.worker ? [`worker-src ${extra.worker}`] : []),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join("; ");

const headers = (csp: string) => ({
  "Content-Security-Policy": csp,
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
  "Cache-Control": "no-cache",
});
const SWAGGER_HEADERS = headers(policy());
const REDOC_HEADERS = headers(policy({ style: "'unsafe-inline'", worker: "blob:" }));

const page = (title: string, head: string, body: string) =>
  `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${title}</title>` +
  `<meta name="viewport" content="width=device-width, initial-scale=1">${head}</head>` +
  `<body>${body}</body></html>`;

/** The docs routes for the API app `api`, mounted at the site root. */
export function docsRoutes(api: OpenAPIHono<AppEnv>, assetRoot: URL) {
  const app = new Hono<AppEnv>();
  let document: unknown;
  app.get("/openapi.json", (c) => {
    document ??= api.getOpenAPI31Document({
      openapi: "3.1.0",
      info: {
        title: "Reaction image board API",
        version: "1.0.0",
        description: "Upload reaction images with tags, find them by tag, paste their link.",
      },
      servers: [{ url: "/api/v1" }],
      security: [],
    });
    return c.json(document);
  });
  app.get("/docs", (c) =>
    c.html(
      page(
        "API docs",
        `<link rel="stylesheet" href="/docs/assets/swagger-ui.css">`,
        `<div id="swagger-ui"></div><script src="/docs/assets/swagger-ui-bundle.js"></script>` +
          `<script src="/docs/assets/swagger-init.js"></script>`,
      ),
      200,
      SWAGGER_HEADERS,
    ));
  app.get("/redoc", (c) =>
    c.html(
      page(
        "API reference",
        "",
        `<redoc spec-url="/openapi.json"></redoc><script src="/docs/assets/redoc.standalone.js"></script>`,
      ),
      200,
      REDOC_HEADERS,
    ));
  app.get(
    "/docs/assets/swagger-init.js",
    (c) => c.body(SWAGGER_INIT, 200, { "Content-Type": "text/javascript; charset=utf-8" }),
  );
  app.get("/docs/assets/:name", async (c) => {
    // Own keys only: `constructor` and the like are inherited by every object, not assets.
    const name = c.req.param("name");
    const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
    if (!asset) return c.notFound();
    const file = await Deno.open(new URL(`${asset.pkg}/${asset.file}`, assetRoot));
    return c.body(file.readable, 200, {
      "Content-Type": `${asset.type}; charset=utf-8`,
      "Cache-Control": "public, max-age=86400",
    });
  });
  return app;
}
