/** `/images` reads: list and detail. Writes are in image_writes.ts, bytes in delivery.ts. */
import { createRoute, z } from "@hono/zod-openapi";
import { MAX_EXAMINED } from "../db/images.ts";
import { AppError, forField } from "../domain/errors.ts";
import { parseTagFilter, parseTagList, type TagFilter } from "../domain/tag_names.ts";
import { MAX_QUERY_CHARS } from "../domain/caption_text.ts";
import type { ReadModel } from "../domain/types.ts";
import { newRouter } from "./router.ts";
import { errorResponse, Image, ShortIdParam } from "./schemas.ts";

/** The 404 of an unknown or malformed short ID. */
export const notFound = () => new AppError("not_found", "Image not found");
/** A JSON content entry of the OpenAPI document. */
export const json = (schema: z.ZodType) => ({ "application/json": { schema } });

/** Normalised tag names, or 422 `invalid_tag_name` naming the bad one. */
export function tagsOrThrow(values: string[]): string[] {
  return forField("tags", "invalid_tag_name", () => parseTagList(values));
}

/** A tag filter (`a,-b`), or 422 `invalid_tag_name` naming the bad name. */
export function filterOrThrow(values: string[]): TagFilter {
  return forField("tags", "invalid_tag_name", () => parseTagFilter(values));
}

const listRoute = createRoute({
  method: "get",
  path: "/images",
  operationId: "listImages",
  tags: ["images"],
  summary: "List images, newest first; `tags` keeps images carrying all of them (`-name`: none), " +
    "`q` those whose caption has its words",
  request: {
    query: z.object({
      tags: z.union([z.string(), z.array(z.string())]).optional().openapi({
        description: "Comma-separated and/or repeated tag names; `-name` excludes a tag " +
          "(`happy,-sarcastic`). At most 50 of both kinds; aliases mean their targets",
      }),
      q: z.string().max(MAX_QUERY_CHARS).optional().openapi({
        description: `Words printed on the image (its \`text\`), at most ${MAX_QUERY_CHARS} ` +
          "characters. Every word of three letters or more must match a word of the caption, " +
          "case-insensitively and allowing for recognition slips (trigram similarity: " +
          "`facepalm` finds `FACEPRALM`); shorter words count only when there are no longer " +
          "ones. Images where every word matches exactly come first, then approximate " +
          "matches, each newest first. Combines with `tags`",
        example: "this is fine",
      }),
      uploader: z.string().max(64).optional().openapi({
        description: "Only the images this person uploaded (a username); combines with `tags` " +
          "and `q`. With `q`, a page may hold fewer than `limit` images: follow `next_cursor`",
        example: "alice",
      }),
      sort: z.enum(["newest", "relevance"]).default("newest").openapi({
        description: "`relevance` (with `q`): the best match first. Each word of `q` must match " +
          "the caption (exactly or approximately) or one of the image's tag names or aliases " +
          "(or a `_`-separated part of one); the query's words as a phrase in the caption come " +
          "first, then every word exact in the caption, then words matched through tags, then " +
          "approximate matches; ties go to the most sent (`send_count`), then the newest. " +
          "Without `q`, or with `uploader`, the order is the listing's",
      }),
      limit: z.coerce.number().int().min(1).max(200).default(50),
      cursor: z.string().max(64).optional(),
    }),
  },
  responses: {
    200: {
      description: "One page",
      content: json(z.object({
        items: z.array(Image),
        next_cursor: z.string().nullable().openapi({
          description: "Where the next page starts; null at the end. A filtered listing " +
            `examines at most ${
              MAX_EXAMINED.toLocaleString("en-US")
            } candidate images a request, ` +
            "so a filter that few of them " +
            "pass can answer a short or empty page with a next_cursor: keep paging until it is null",
        }),
      })),
    },
    422: errorResponse("Invalid query"),
  },
});

const getRoute = createRoute({
  method: "get",
  path: "/images/{id}",
  operationId: "getImage",
  tags: ["images"],
  summary: "One image",
  request: { params: ShortIdParam },
  responses: {
    200: { description: "The image", content: json(Image) },
    404: errorResponse("No such image"),
  },
});

/** The image read routes. */
export function imageRoutes(read: ReadModel) {
  const app = newRouter();

  app.openapi(listRoute, async (c) => {
    const q = c.req.valid("query");
    const filter = filterOrThrow(c.req.queries("tags") ?? (q.tags ? [q.tags].flat() : []));
    const page = await read.listImages({
      tags: filter.include,
      exclude: filter.exclude,
      q: q.q ?? null,
      uploader: q.uploader?.trim() || null,
      sort: q.sort,
      limit: q.limit,
      cursor: q.cursor ?? null,
    });
    return c.json(page, 200);
  });

  app.openapi(getRoute, async (c) => {
    const image = await read.getImage(c.req.valid("param").id);
    if (!image) throw notFound();
    return c.json(image, 200);
  });

  return app;
}
