/** Serving of the hashed build output under `/_static/`. */
import type { Handler } from "hono";

const CONTENT_TYPES: Record<string, string> = {
  js: "text/javascript; charset=utf-8",
  css: "text/css; charset=utf-8",
  map: "application/json; charset=utf-8",
  json: "application/json; charset=utf-8",
  svg: "image/svg+xml",
  png: "image/png",
  ico: "image/x-icon",
  webp: "image/webp",
  woff2: "font/woff2",
  txt: "text/plain; charset=utf-8",
};

/** Cache header for content-hashed files: they never change under their name. */
export const IMMUTABLE = "public, max-age=31536000, immutable";

const SAFE_NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

async function readOrNull(path: string): Promise<Uint8Array<ArrayBuffer> | null> {
  try {
    return await Deno.readFile(path);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound || err instanceof Deno.errors.IsADirectory) {
      return null;
    }
    throw err;
  }
}

/**
 * A Hono handler for `/_static/:file` that serves `{dir}/{file}` (the build's `static/` folder)
 * with an immutable cache header, its content type and `nosniff`; a pre-compressed `.gz`
 * sibling is sent instead when the client accepts gzip.
 */
export function serveStatic(dir: string, opts: { immutable?: boolean } = {}): Handler {
  const cacheControl = opts.immutable === false ? "no-cache" : IMMUTABLE;
  return async (c) => {
    const name = c.req.param("file") ?? "";
    const ext = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
    const type = CONTENT_TYPES[ext];
    if (!SAFE_NAME.test(name) || name.includes("..") || !type) return notFound();
    const headers = new Headers({
      "Content-Type": type,
      "Cache-Control": cacheControl,
      "X-Content-Type-Options": "nosniff",
      "Vary": "Accept-Encoding",
    });
    const gzip = /\bgzip\b/.test(c.req.header("Accept-Encoding") ?? "");
    let bytes = gzip ? await readOrNull(`${dir}/${name}.gz`) : null;
    if (bytes) headers.set("Content-Encoding", "gzip");
    else bytes = await readOrNull(`${dir}/${name}`);
    if (!bytes) return notFound();
    headers.set("Content-Length", String(bytes.byteLength));
    return new Response(c.req.method === "HEAD" ? null : bytes, { headers });
  };
}

function notFound(): Response {
  return new Response("Not found\n", {
    status: 404,
    headers: { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" },
  });
}
