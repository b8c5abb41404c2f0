/**
 * Near-duplicates (issue 22): an image's similar images and the "possible duplicates" pairs
 * (public reads), and merging one image into another (bearer). Logic in domain/similar.ts and
 * db/similar.ts.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { ReadGate } from "../adapters/http/read_gate.ts";
import { listSimilarImages, listSimilarPairs } from "../db/similar.ts";
import { toImageDto } from "../services/read_model.ts";
import type { Services } from "../services/deps.ts";
import { isShortId } from "../domain/short_id.ts";
import { DEFAULT_DISTANCE, MAX_DISTANCE } from "../domain/similar.ts";
import type { ReadModel } from "../domain/types.ts";
import { mergeImage } from "../services/merge_into.ts";
import { json, notFound } from "./images.ts";
import { guard, principal } from "./permissions.ts";
import { recordAudit } from "../services/audit.ts";
import { throughGate } from "./read_limit.ts";
import { newRouter } from "./router.ts";
import { bearer, errorResponse, Image, ShortIdParam } from "./schemas.ts";

/** A near-duplicate as an upload's response lists it. */
export const SimilarRef = z.object({
  short_id: z.string(),
  distance: z.number().int().openapi({ description: "Bits in which the perceptual hashes differ" }),
}).openapi("SimilarRef");

/** The upload's answer: the image and the near-duplicates already on the board. */
export const UploadedImage = Image.extend({
  similar: z.array(SimilarRef).openapi({
    description: `Up to 5 images within distance ${DEFAULT_DISTANCE}, nearest first`,
  }),
}).openapi("UploadedImage");

const SimilarImage = z.object({ image: Image, distance: z.number().int() }).openapi("SimilarImage");

const DuplicatePair = z.object({
  a: Image,
  b: Image,
  distance: z.number().int(),
  shared_tags: z.number().int(),
}).openapi("DuplicatePair");

const similarRoute = createRoute({
  method: "get",
  path: "/images/{id}/similar",
  operationId: "listSimilarImages",
  tags: ["images"],
  summary: "Near-duplicates of an image, nearest first (never the image itself)",
  request: {
    params: ShortIdParam,
    query: z.object({
      max_distance: z.coerce.number().int().min(0).max(MAX_DISTANCE).default(DEFAULT_DISTANCE)
        .openapi({ description: "Largest Hamming distance between the perceptual hashes" }),
      limit: z.coerce.number().int().min(1).max(100).default(20),
    }),
  },
  responses: {
    200: {
      description: "The near-duplicates",
      content: json(z.object({ items: z.array(SimilarImage) })),
    },
    404: errorResponse("No such image"),
    422: errorResponse("Invalid query"),
    429: errorResponse("This address has its share of searches in flight (`too_many_reads`)"),
    503: errorResponse("Every search slot is taken, try again shortly (`reads_busy`)"),
  },
});

const pairsRoute = createRoute({
  method: "get",
  path: "/duplicates",
  operationId: "listDuplicatePairs",
  tags: ["images"],
  summary: `Pairs of images within distance ${DEFAULT_DISTANCE}, most shared tags first`,
  request: {
    query: z.object({
      limit: z.coerce.number().int().min(1).max(100).default(50),
      offset: z.coerce.number().int().min(0).max(10_000).default(0),
    }),
  },
  responses: {
    200: {
      description: "One page of pairs",
      content: json(z.object({ items: z.array(DuplicatePair) })),
    },
    422: errorResponse("Invalid query"),
    429: errorResponse("This address has its share of searches in flight (`too_many_reads`)"),
    503: errorResponse("Every search slot is taken, try again shortly (`reads_busy`)"),
  },
});

/** The public near-duplicate routes. */
export function similarRoutes(services: Services, gate = new ReadGate()) {
  const { sql, config } = services;
  const dto = (row: Parameters<typeof toImageDto>[0]) => toImageDto(row, config.S3_PUBLIC_BASE_URL);
  const app = newRouter();
  app.openapi(similarRoute, async (c) => {
    const { id } = c.req.valid("param");
    const { max_distance, limit } = c.req.valid("query");
    const found = isShortId(id)
      ? await throughGate(gate, c, config, () => listSimilarImages(sql, id, max_distance, limit))
      : null;
    if (!found) throw notFound();
    return c.json(
      { items: found.map((f) => ({ image: dto(f.image), distance: f.distance })) },
      200,
    );
  });
  app.openapi(pairsRoute, async (c) => {
    const { limit, offset } = c.req.valid("query");
    const pairs = await throughGate(gate, c, config, () => listSimilarPairs(sql, limit, offset));
    return c.json({ items: pairs.map((p) => ({ ...p, a: dto(p.a), b: dto(p.b) })) }, 200);
  });
  return app;
}

/** `POST /images/{id}/merge-into/{other}`, behind requireAuth. */
export function mergeRoutes(services: Services, read: ReadModel) {
  const { sql, store } = services;
  return newRouter().openapi(
    createRoute({
      method: "post",
      path: "/images/{id}/merge-into/{other}",
      operationId: "mergeImage",
      tags: ["images"],
      summary: "Move an image's tags (and its caption, if the other has none) to another " +
        "image, then delete it with its objects",
      security: bearer,
      middleware: [guard(services, "POST /images/:id/merge-into/:other")] as const,
      request: {
        params: ShortIdParam.extend({
          other: z.string().openapi({ param: { name: "other", in: "path" }, example: "bQ7mN2wE" }),
        }),
      },
      responses: {
        200: { description: "The image merged into, with its tags", content: json(Image) },
        401: errorResponse("Not signed in"),
        403: errorResponse(
          "A member merging another's upload away, or a key without `delete` (`forbidden`)",
        ),
        404: errorResponse("No such image (either one)"),
        422: errorResponse(
          "Merging an image into itself (`code`: `self_merge`), or more than 50 tags on the " +
            "result (`code`: `too_many_tags`)",
        ),
      },
    }),
    async (c) => {
      const { id, other } = c.req.valid("param");
      if (!await mergeImage({ sql, store, log: c.get("log") }, id, other)) throw notFound();
      await recordAudit(sql, principal(c), "image.merge", id, { into: other });
      const image = await read.getImage(other);
      if (!image) throw notFound();
      return c.json(image, 200);
    },
  );
}
