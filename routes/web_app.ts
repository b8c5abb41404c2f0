/**
 * The board as an installable web app (issue 44): the web app manifest, the service worker at
 * `/sw.js`, the share target's fallback, and the `<head>` elements every page carries for them.
 */
import type { Context, Hono } from "hono";
import { loadManifest, type Manifest } from "../adapters/islands/mod.ts";
import type { HeadTag } from "../adapters/islands/mod.ts";

/** The colours of the header (`--card` in static/app.css), light and dark. */
export const THEME = { light: "#ffffff", dark: "#1d1d23" } as const;
/** The page background (`--bg`), light and dark. */
export const BACKGROUND = { light: "#fafafa", dark: "#131317" } as const;

/** The text search engines and share sheets show for a page that has no text of its own. */
export const DEFAULT_DESCRIPTION =
  "A board of reaction images: find one by its tags or the words on it, and send it into a chat.";

/** Where the share target posts, and where the service worker sends what arrived. */
export const SHARE_TARGET_PATH = "/share-target";

/** The web app manifest for a build's `manifest` (icons by their hashed URLs). */
export function webAppManifest(manifest: Manifest): Record<string, unknown> {
  const icon = (file: string, sizes: string, purpose: string) => ({
    src: manifest.files[file],
    sizes,
    type: "image/png",
    purpose,
  });
  return {
    id: "/",
    name: "Reactions",
    short_name: "Reactions",
    description: DEFAULT_DESCRIPTION,
    start_url: "/",
    scope: "/",
    display: "standalone",
    orientation: "any",
    theme_color: THEME.light,
    background_color: BACKGROUND.light,
    // Chromium's proposal for dark-mode colours; browsers without it ignore the member.
    user_preferences: {
      color_scheme_dark: { theme_color: THEME.dark, background_color: BACKGROUND.dark },
    },
    icons: [
      icon("icon-192.png", "192x192", "any"),
      icon("icon-512.png", "512x512", "any"),
      icon("icon-maskable-512.png", "512x512", "maskable"),
    ],
    share_target: {
      action: SHARE_TARGET_PATH,
      method: "POST",
      enctype: "multipart/form-data",
      params: {
        title: "title",
        text: "text",
        url: "url",
        files: [{ name: "files", accept: ["image/*"] }],
      },
    },
  };
}

/** The `<head>` elements of every page: the manifest, the touch icon, the theme colours. */
export function webAppHead(manifest: Manifest): HeadTag[] {
  const tags: HeadTag[] = [
    { tag: "link", attrs: { rel: "manifest", href: "/manifest.webmanifest" } },
  ];
  const touch = manifest.files["apple-touch-icon.png"];
  if (touch) tags.push({ tag: "link", attrs: { rel: "apple-touch-icon", href: touch } });
  for (const scheme of ["light", "dark"] as const) {
    tags.push({
      tag: "meta",
      attrs: {
        name: "theme-color",
        content: THEME[scheme],
        media: `(prefers-color-scheme: ${scheme})`,
      },
    });
  }
  return tags;
}

/**
 * Registers `/manifest.webmanifest`, `/sw.js` and the share target's fallback on `app`. The
 * worker is served with `no-cache`, so a browser checks it on every visit and a new build takes
 * over on the next load.
 */
export function webAppRoutes(app: Hono, opts: { assetsDir: string; dev?: boolean }): void {
  let fixed: { manifest: string; worker: string } | null = null;
  const files = () => {
    if (fixed) return fixed;
    const built = {
      manifest: JSON.stringify(webAppManifest(loadManifest(opts.assetsDir))),
      worker: Deno.readTextFileSync(`${opts.assetsDir}/sw.js`),
    };
    if (!opts.dev) fixed = built;
    return built;
  };
  const send = (c: Context, body: string, type: string) =>
    new Response(c.req.method === "HEAD" ? null : body, {
      headers: {
        "Content-Type": type,
        "Cache-Control": "no-cache",
        "X-Content-Type-Options": "nosniff",
      },
    });
  app.get("/manifest.webmanifest", (c) => send(c, files().manifest, "application/manifest+json"));
  app.get("/sw.js", (c) => send(c, files().worker, "text/javascript; charset=utf-8"));
  // The service worker answers this POST itself (static/sw.js). Without one (not installed yet,
  // or a browser without service workers), the files cannot reach the page: say so there.
  app.post(SHARE_TARGET_PATH, (c) => c.redirect("/upload?share=unavailable", 303));
}
