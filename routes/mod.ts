/** The page routes (Fresh-style: one file per route) and static assets as one Hono app. */
import { type Context, Hono } from "hono";
import { isDatabaseUnavailable } from "../db/client.ts";
import type { Logger } from "../lib/log.ts";
import { StorageError } from "../lib/storage/mod.ts";
import { islands } from "../islands.gen.ts";
import { registerIslands, serveStatic } from "../lib/islands/mod.ts";
import { originOf, type OriginSettings } from "../lib/sharing/mod.ts";
import type { ReadModel } from "../lib/types.ts";
import { createRenderer, type PageContext } from "./_app.tsx";
import { notFoundPage, problemPage } from "./_404.tsx";
import * as detail from "./i/[short_id].tsx";
import * as library from "./index.tsx";
import * as login from "./login.tsx";
import * as tags from "./tags.tsx";
import * as upload from "./upload.tsx";

/** Errors of the read side caused by the URL (matched by name: pages do not import db code). */
const CLIENT_ERRORS = new Set(["BadCursorError", "TagNameError", "TooManyTagsError"]);

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
 * The UI: `/`, `/tags`, `/i/:short_id`, `/upload`, `/login`, hashed assets under `/_static/`,
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
  const notFound = (c: Context) => notFoundPage(c, ctx);
  // Unknown /api/ paths fall through to the API's own JSON not-found answer.
  app.all("*", (c, next) => c.req.path.startsWith("/api/") ? next() : notFound(c));
  app.notFound(notFound);
  app.onError((err, c) => {
    const status = (err as { status?: unknown }).status;
    if (typeof status === "number" && status >= 400 && status < 500) {
      return problemPage(c, ctx, status === 404 ? 404 : 400);
    }
    if (CLIENT_ERRORS.has(err.name)) return problemPage(c, ctx, 400);
    // The shell's logger carries the request id (app_shell.ts); a page app alone has none.
    const log = (c.get as (key: string) => Logger | undefined)("log");
    if (isDatabaseUnavailable(err) || err instanceof StorageError) {
      // A dependency outage, as the API answers it: 503, and when to try again.
      log?.error("page failed: a dependency is unavailable", { path: c.req.path, err });
      const res = problemPage(c, ctx, 503);
      res.headers.set("Retry-After", "5");
      return res;
    }
    if (log) log.error("page failed", { path: c.req.path, err });
    else console.error("page failed", c.req.path, err);
    return problemPage(c, ctx, 500);
  });
  return app;
}
