/** The page routes (Fresh-style: one file per route) and static assets as one Hono app. */
import { type Context, Hono } from "hono";
import { problemOf } from "../domain/errors.ts";
import type { Logger } from "../adapters/log.ts";
import { islands } from "../islands.gen.ts";
import { registerIslands, serveStatic } from "../adapters/islands/mod.ts";
import { originOf, type OriginSettings } from "../adapters/http/origin.ts";
import type { ReadModel } from "../domain/types.ts";
import { createRenderer, type PageContext } from "./_app.tsx";
import { notFoundPage, problemPage } from "./_404.tsx";
import * as detail from "./i/[short_id].tsx";
import * as library from "./index.tsx";
import * as login from "./login.tsx";
import * as offline from "./offline.tsx";
import * as tags from "./tags.tsx";
import * as upload from "./upload.tsx";
import * as me from "./me.tsx";
import * as admin from "./admin.tsx";
import * as favorites from "./favorites.tsx";
import * as invite from "./invite/[code].tsx";
import { webAppRoutes } from "./web_app.ts";

/** What the pages need. */
export interface PagesDeps {
  read: ReadModel;
  /** The build output (`_build`): `manifest.json` and `static/`. */
  assetsDir: string;
  /** Re-read the manifest per request and do not cache static files. */
  dev?: boolean;
  /** Link the API docs in the footer. */
  docsEnabled?: boolean;
  /** Memory for rendered pages (default PAGE_CACHE_BYTES of _app.tsx). */
  pageCacheBytes?: number;
  /** Where shared links point (default: the request's own origin, no proxy trusted). */
  sharing?: OriginSettings;
}

/**
 * The UI: `/`, `/tags`, `/i/:short_id`, `/upload`, `/login`, `/me`, `/admin`, `/favorites`,
 * `/invite/:code`, hashed assets under `/_static/`,
 * and the HTML not-found page (status 404) for every other path outside `/api/`. Mount it last
 * (`app.route("/", createPagesApp(deps))`): its catch-all answers every path left over.
 */
export function createPagesApp(deps: PagesDeps): Hono {
  registerIslands(islands);
  const sharing = deps.sharing ?? { trustedProxies: [] };
  const ctx: PageContext = {
    read: deps.read,
    render: createRenderer(deps),
    origin: (c) => originOf(c, sharing),
    publicBaseUrl: sharing.publicBaseUrl ?? null,
  };
  const app = new Hono();
  app.get("/_static/:file", serveStatic(`${deps.assetsDir}/static`, { immutable: !deps.dev }));
  app.get("/", (c) => library.handler(c, ctx));
  app.get("/tags", (c) => tags.handler(c, ctx));
  app.get("/i/:short_id", (c) => detail.handler(c, ctx));
  app.get("/upload", (c) => upload.handler(c, ctx));
  app.get("/login", (c) => login.handler(c, ctx));
  app.get("/me", (c) => me.handler(c, ctx));
  app.get("/admin", (c) => admin.handler(c, ctx));
  app.get("/favorites", (c) => favorites.handler(c, ctx));
  app.get("/invite/:code", (c) => invite.handler(c, ctx));
  app.get("/offline", (c) => offline.handler(c, ctx));
  webAppRoutes(app, deps);
  const notFound = (c: Context) => notFoundPage(c, ctx);
  // Unknown /api/ paths fall through to the API's own JSON not-found answer.
  app.all("*", (c, next) => c.req.path.startsWith("/api/") ? next() : notFound(c));
  app.notFound(notFound);
  app.onError((err, c) => {
    // The API's table (domain/errors.ts) decides, so a page and the API agree: a page has one page
    // for every other refusal of the request (400), and keeps the status and headers of a server
    // error or a rate limit (a 503 or 429 says when to try again); tests/errors_test.ts.
    const problem = problemOf(err);
    if (problem.log) {
      // The shell's logger carries the request id (wiring/app_shell.ts); a page app alone has none.
      const log = (c.get as (key: string) => Logger | undefined)("log");
      const message = `page failed: ${problem.log.message}`;
      if (log) log[problem.log.level](message, { path: c.req.path, err: problem.log.err });
      else console.error(message, c.req.path, err);
    }
    if (problem.status < 500 && problem.status !== 429) {
      return problemPage(c, ctx, problem.status === 404 ? 404 : 400);
    }
    const res = problemPage(c, ctx, problem.status);
    for (const [name, value] of Object.entries(problem.headers)) res.headers.set(name, value);
    return res;
  });
  return app;
}
