/**
 * The size cap of every request body but an upload's: JSON and form bodies (tag edits, sign-in,
 * and every route added later) answer 413 `{"code":"body_too_large"}` above MAX_BODY_BYTES,
 * before they are read: a Content-Length over the cap is refused at once, and a body without one
 * is cut off as soon as it passes the cap. An upload (POST /images) has its own, larger cap
 * (MAX_UPLOAD_BYTES, api/upload_body.ts), and so has a search by image (MAX_QUERY_IMAGE_BYTES).
 */
import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { AppError } from "../domain/errors.ts";

/** The largest JSON or form body: 64 KiB, far above any edit the API takes. */
export const MAX_BODY_BYTES = 64 * 1024;

const capped = bodyLimit({
  maxSize: MAX_BODY_BYTES,
  onError: () => {
    throw new AppError(
      "body_too_large",
      `The request body is larger than the limit of ${MAX_BODY_BYTES} bytes`,
      { fields: { max_bytes: MAX_BODY_BYTES } },
    );
  },
});

/** Caps the body of every request except an upload's and a search by image's; register it first. */
export const capBodies: MiddlewareHandler = (c, next) =>
  c.req.method === "POST" && /\/images(\/search-by-image)?$/.test(c.req.path)
    ? next()
    : capped(c, next);
