/** The page frame and renderer shared by every route: layout, islands, security headers. */
import type { Context } from "hono";
import type { VNode } from "preact";
import { Layout } from "../components/Layout.tsx";
import { loadManifest, type Manifest, renderPage } from "../lib/islands/mod.ts";
import type { ReadModel } from "../lib/types.ts";

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
   * read model's listing cache, lib/http/snapshot_cache.ts): the HTML is then rendered once per URL
   * and reused for as long as that object is kept.
   */
  memo?: object;
}

/** At most this many URLs (query strings) are remembered per memo object. */
const MEMO_URLS = 8;

/** Renders `body` inside the layout into an HTML response. */
export type Render = (c: Context, body: VNode, opts: RenderOptions) => Response;

/** What a page handler gets: the read side and the renderer. */
export interface PageContext {
  read: ReadModel;
  render: Render;
}

/** A route's handler: parse, call one ReadModel function, render. */
export type PageHandler = (c: Context, ctx: PageContext) => Promise<Response> | Response;

/** Options of `createRenderer()`. */
export interface RendererOptions {
  assetsDir: string;
  /** Re-read the manifest on every page, so a rebuild is picked up without a restart. */
  dev?: boolean;
  docsEnabled?: boolean;
}

/** The renderer of the pages; reads `{assetsDir}/manifest.json` once (every time in dev). */
export function createRenderer(opts: RendererOptions): Render {
  const fixed: Manifest | null = opts.dev ? null : loadManifest(opts.assetsDir);
  // The HTML is a function of the URL and the memo object alone (the manifest is fixed outside
  // dev); entries go when their object is dropped from the listing cache.
  const memos = new WeakMap<object, Map<string, string>>();
  return (c, body, { title, status = 200, authNav = true, memo }) => {
    const url = new URL(c.req.url);
    const path = url.pathname + url.search;
    const kept = memo && fixed ? memos.get(memo) ?? new Map<string, string>() : null;
    let html = kept?.get(path);
    if (html === undefined) {
      html = renderPage(
        <Layout path={path} authNav={authNav} docs={opts.docsEnabled}>
          {body}
        </Layout>,
        { title: `${title} · Reactions`, manifest: fixed ?? loadManifest(opts.assetsDir), status },
      ).html;
      if (memo && kept && kept.size < MEMO_URLS) memos.set(memo, kept.set(path, html));
    }
    const headers = new Headers(PAGE_HEADERS);
    headers.set("Content-Type", "text/html; charset=utf-8");
    return new Response(c.req.method === "HEAD" ? null : html, { status, headers });
  };
}
