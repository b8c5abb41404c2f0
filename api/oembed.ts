/**
 * `GET /oembed`: the oEmbed provider endpoint (https://oembed.com) for image pages and direct
 * links of this site. JSON only; `format=xml` (or any other) is 501, as the spec asks.
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Services } from "../services/deps.ts";
import { extensionOf } from "../domain/share_links.ts";
import { oembedPhoto, shortIdOfUrl } from "../domain/oembed.ts";
import { originOf, originSettings } from "../adapters/http/origin.ts";
import type { ReadModel } from "../domain/types.ts";
import { AppError } from "../domain/errors.ts";
import { json } from "./images.ts";
import { newRouter } from "./router.ts";
import { errorResponse } from "./schemas.ts";

const bound = z.coerce.number().int().min(1).max(100_000).optional();

/** The `photo` answer (oEmbed 1.0, section 2.3.4). */
export const OEmbed = z.object({
  version: z.literal("1.0"),
  type: z.literal("photo"),
  url: z.string().openapi({ example: "https://reactions.example.com/aZ3kP9qX.gif" }),
  width: z.number().int(),
  height: z.number().int(),
  title: z.string().openapi({ example: "facepalm, picard" }),
  provider_name: z.string().openapi({ example: "Reactions" }),
  provider_url: z.string().openapi({ example: "https://reactions.example.com/" }),
  cache_age: z.number().int(),
  thumbnail_url: z.string(),
  thumbnail_width: z.number().int(),
  thumbnail_height: z.number().int(),
}).openapi("OEmbed");

const route = createRoute({
  method: "get",
  path: "/oembed",
  operationId: "getOembed",
  tags: ["sharing"],
  summary: "oEmbed for an image page (`/i/{short_id}`) or a direct link (`/{short_id}.{ext}`)",
  request: {
    query: z.object({
      url: z.string().min(1).max(2048).openapi({
        description: "An image page or direct link of this site",
        example: "https://reactions.example.com/i/aZ3kP9qX",
      }),
      maxwidth: bound.openapi({ description: "Scale the answer to at most this width" }),
      maxheight: bound.openapi({ description: "Scale the answer to at most this height" }),
      format: z.string().max(16).optional().openapi({
        description: "`json` (the default); anything else is 501",
      }),
    }),
  },
  responses: {
    200: { description: "A `photo` oEmbed answer", content: json(OEmbed) },
    404: errorResponse("Not an image of this site"),
    422: errorResponse("Invalid query"),
    501: errorResponse("Format not implemented (only JSON)"),
  },
});

/** The oEmbed route. */
export function oembedRoutes(services: Pick<Services, "config">, read: ReadModel) {
  const settings = originSettings(services.config);
  const app = newRouter();
  app.openapi(route, async (c) => {
    const q = c.req.valid("query");
    if (q.format !== undefined && q.format.toLowerCase() !== "json") {
      throw new AppError("not_implemented", "Only format=json is implemented");
    }
    const origin = originOf(c, settings);
    const named = shortIdOfUrl(q.url, origin);
    const image = named ? await read.getImage(named.shortId) : null;
    if (!image || (named!.ext !== undefined && extensionOf(image.content_type) !== named!.ext)) {
      throw new AppError("not_found", "No image of this site has that URL");
    }
    c.header("Cache-Control", "public, max-age=300");
    c.header("Vary", "Host, X-Forwarded-Host, X-Forwarded-Proto");
    return c.json(oembedPhoto(origin, image, q), 200);
  });
  return app;
}
