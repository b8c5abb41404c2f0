/**
 * `POST /images/search-by-image` (issue 44): the images that look like an uploaded file, nearest
 * first, the file never stored. Public, so each address may search QUERY_IMAGES_PER_MINUTE times
 * a minute (the address the login lock sees, behind a trusted proxy too); the body is read with
 * the upload's parser under its own cap, MAX_QUERY_IMAGE_BYTES.
 */
import { z } from "@hono/zod-openapi";
import { RateLimiter } from "../adapters/http/rate_limit.ts";
import { toImageDto } from "../services/read_model.ts";
import { AppError } from "../domain/errors.ts";
import { limiterKey, peerAddress, resolveClientIp } from "../adapters/http/mod.ts";
import type { Services } from "../services/deps.ts";
import { DEFAULT_DISTANCE, MAX_DISTANCE } from "../domain/similar.ts";
import { Slots } from "../domain/slots.ts";
import { searchByImage } from "../services/search_by_image.ts";
import { json } from "./images.ts";
import { newRouter } from "./router.ts";
import { errorResponse, Image } from "./schemas.ts";
import { readUploadForm } from "./upload_body.ts";
import { READ_SLOT_WAIT_MS, READ_SLOTS } from "./upload_gate.ts";

/** The route's path, under /api/v1 (api/body_limit.ts leaves its body to its own cap). */
export const SEARCH_BY_IMAGE_PATH = "/images/search-by-image";

const Query = z.object({
  max_distance: z.coerce.number().int().min(0).max(MAX_DISTANCE).default(DEFAULT_DISTANCE)
    .openapi({ description: "Largest Hamming distance between the perceptual hashes" }),
  limit: z.coerce.number().int().min(1).max(100).default(20),
});

const Match = z.object({ image: Image, distance: z.number().int() }).openapi("ImageMatch");

/** The search route, with its per-address limit. */
export function searchByImageRoutes(services: Services) {
  const { config } = services;
  const app = newRouter();
  const limiter = new RateLimiter({ limit: config.QUERY_IMAGES_PER_MINUTE });
  const reading = new Slots(READ_SLOTS, READ_SLOT_WAIT_MS);

  app.openAPIRegistry.registerPath({
    method: "post",
    path: SEARCH_BY_IMAGE_PATH,
    operationId: "searchByImage",
    tags: ["images"],
    summary: "Images that look like the given file, nearest first; the file is not stored",
    request: {
      query: Query,
      body: {
        content: {
          "multipart/form-data": {
            schema: z.object({ file: z.any().openapi({ type: "string", format: "binary" }) }),
          },
        },
      },
    },
    responses: {
      200: {
        description: "The matches (none: an empty list)",
        content: json(z.object({ items: z.array(Match) })),
      },
      400: errorResponse("Not a multipart body"),
      413: errorResponse("Larger than MAX_QUERY_IMAGE_BYTES (`code`, `detail`, `max_bytes`)"),
      415: errorResponse("Not a JPEG, PNG, GIF, WebP or AVIF image, or one that cannot be read"),
      422: errorResponse("Invalid query, no `file`, or more pixels than MAX_IMAGE_PIXELS"),
      429: errorResponse(
        "More than QUERY_IMAGES_PER_MINUTE searches from this address in a minute " +
          "(`code`: `rate_limited`, `retry_after`; `Retry-After` header)",
      ),
      503: errorResponse("Too busy, or the database is down"),
    },
  });

  app.post(SEARCH_BY_IMAGE_PATH, async (c) => {
    const client = resolveClientIp(
      peerAddress(c),
      c.req.raw.headers,
      config.LOGIN_TRUSTED_PROXY_IPS,
      config.LOGIN_CLIENT_IP_HEADER,
    );
    const decision = limiter.take(limiterKey(client.ip));
    if (!decision.allowed) {
      const seconds = decision.retryAfterSeconds;
      throw new AppError("rate_limited", `Too many image searches; try again in ${seconds} s`, {
        fields: { retry_after: seconds },
        headers: { "Retry-After": String(seconds) },
      });
    }
    const parsed = Query.safeParse(c.req.query());
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new AppError("invalid_field", `${issue.path.join(".")}: ${issue.message}`);
    }
    let bytes: Uint8Array;
    {
      using _reading = await reading.take();
      bytes = (await readUploadForm(c.req.raw, config.MAX_QUERY_IMAGE_BYTES)).bytes;
    }
    const matches = await searchByImage(services, bytes, {
      maxDistance: parsed.data.max_distance,
      limit: parsed.data.limit,
    });
    const items = matches.map(({ image, distance }) => ({
      image: toImageDto(image, config.S3_PUBLIC_BASE_URL),
      distance,
    }));
    return c.json({ items }, 200);
  });
  return app;
}
