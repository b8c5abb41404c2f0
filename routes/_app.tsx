/** The page frame and renderer shared by every route: layout, islands, security headers. */
import type { Context } from "hono";
import type { VNode } from "preact";
import { Layout } from "./_layout.tsx";
import { ByteCache } from "../adapters/http/mod.ts";
import { type HeadTag, loadManifest, type Manifest, renderPage } from "../adapters/islands/mod.ts";
import type { ReadModel } from "../domain/types.ts";
import { DEFAULT_DESCRIPTION, webAppHead } from "./web_app.ts";

/** Headers of every page: scripts only from this origin, images also from a CDN (https:). */
export const PAGE_HEADERS: Record<string, string> = {
  "Content-Security-Policy": [
    "default-src 'self'",
    "script-src 'self'",
    "img-src 'self' data: blob: https:",
    "style-src 'self'",
    "connect-src 'self'",
    "font-src 'self'",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "object-src 'none'",
    // The service worker (/sw.js) and the web app manifest: this origin only (routes/web_app.ts).
    "worker-src 'self'",
    "manifest-src 'self'",
  ].join("; "),
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "strict-origin-when-cross-origin",
  "X-Frame-Options": "DENY",
  "Cache-Control": "no-cache",
};

/** Options of one rendered page. */
export interface RenderOptions {
  title: string;
  status?: number;
  /** Include the sign-in state island in the header (default true). */
  authNav?: boolean;
  /**
   * What the body shows, when that is an object shared unchanged between requests (a page of the
   * read model's listing cache, adapters/http/snapshot_cache.ts): the HTML is then rendered once and
   * reused for as long as that object is kept. Give `path` with it.
   */
  memo?: object;
  /**
   * The page's own address as it depends on nothing but what it shows (for example the library's
   * tags and cursor, never the raw query string): the header's sign-in link returns there, and a
   * memoised page is kept under it. Default: the request's path and query.
   */
  path?: string;
  /** More `<head>` elements: the link-preview tags of an image page. */
  head?: HeadTag[];
  /** The page's meta description (default DEFAULT_DESCRIPTION of routes/web_app.ts). */
  description?: string;
}

/**
 * Memory for rendered pages, in all. A page is kept under its canonical path, not the raw URL, so
 * padded or reordered query strings cannot fill it: 512 such requests once retained 121 MB.
 */
export const PAGE_CACHE_BYTES = 16 * 1024 * 1024;
/** The largest page kept (a library page of 50 images is about 40 KB). */
const PAGE_CACHE_ITEM_BYTES = 1024 * 1024;

/** Renders `body` inside the layout into an HTML response. */
export type Render = (c: Context, body: VNode, opts: RenderOptions) => Response;

/** What a page handler gets: the read side, the renderer, and the origin of shared links. */
export interface PageContext {
  read: ReadModel;
  render: Render;
  /** The origin of links meant for others (PUBLIC_BASE_URL, or the request's). */
  origin: (c: Context) => string;
  /** PUBLIC_BASE_URL: fixed, so pages that are kept rendered may carry it. */
  publicBaseUrl: string | null;
}

/** A route's handler: parse, call one ReadModel function, render. */
export type PageHandler = (c: Context, ctx: PageContext) => Promise<Response> | Response;

/** Options of `createRenderer()`. */
export interface RendererOptions {
  assetsDir: string;
  /** Re-read the manifest on every page, so a rebuild is picked up without a restart. */
  dev?: boolean;
  docsEnabled?: boolean;
  /** Memory for rendered pages (default PAGE_CACHE_BYTES). */
  pageCacheBytes?: number;
}

/** The renderer of the pages; reads `{assetsDir}/manifest.json` once (every time in dev). */
export function createRenderer(opts: RendererOptions): Render {
  const fixed: Manifest | null = opts.dev ? null : loadManifest(opts.assetsDir);
  // A memoised page is a function of its canonical path and its memo object alone (the manifest
  // is fixed outside dev). Each memo object gets a number for the key, so a page of a newer
  // snapshot never meets an older one's HTML; entries of dropped objects age out of the LRU.
  const pages = new ByteCache(opts.pageCacheBytes ?? PAGE_CACHE_BYTES, PAGE_CACHE_ITEM_BYTES);
  const memoIds = new WeakMap<object, number>();
  let nextMemoId = 0;
  const encoder = new TextEncoder();
  return (
    c,
    body,
    { title, status = 200, authNav = true, memo, path: given, head, description },
  ) => {
    const url = new URL(c.req.url);
    const path = given ?? url.pathname + url.search;
    let key: string | null = null;
    if (memo && fixed) {
      let id = memoIds.get(memo);
      if (id === undefined) memoIds.set(memo, id = nextMemoId++);
      key = `${id} ${path}`;
    }
    let html = key === null ? undefined : pages.get(key);
    if (html === undefined) {
      const manifest = fixed ?? loadManifest(opts.assetsDir);
      html = encoder.encode(
        renderPage(
          <Layout path={path} authNav={authNav} docs={opts.docsEnabled}>
            {body}
          </Layout>,
          {
            title: `${title} · Reactions`,
            manifest,
            status,
            head: [...webAppHead(manifest), ...(head ?? [])],
            description: description ?? DEFAULT_DESCRIPTION,
          },
        ).html,
      );
      if (key !== null) pages.set(key, html);
    }
    const headers = new Headers(PAGE_HEADERS);
    headers.set("Content-Type", "text/html; charset=utf-8");
    return new Response(c.req.method === "HEAD" ? null : html, { status, headers });
  };
}
