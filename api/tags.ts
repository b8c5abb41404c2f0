/**
 * `GET /tags`: the tag list with substring search, sort, minimum count and paging;
 * `GET /tags/suggest`: autocomplete.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { MAX_TAG_QUERY_LENGTH } from "../domain/tag_names.ts";
import type { ReadModel } from "../domain/types.ts";
import { newRouter } from "./router.ts";
import { json } from "./images.ts";
import { errorResponse, Tag } from "./schemas.ts";

const suggestRoute = createRoute({
  method: "get",
  path: "/tags/suggest",
  operationId: "suggestTags",
  tags: ["tags"],
  summary: "Autocomplete: tags whose name starts with `q` by image count, then those containing it",
  description: "A match on an alias returns its target with `alias`. A leading `-` (an " +
    "exclusion in a filter) is kept on every returned name.",
  request: {
    query: z.object({
      q: z.string().max(MAX_TAG_QUERY_LENGTH + 1).openapi({ example: "fac" }),
      limit: z.coerce.number().int().min(1).max(50).default(10),
    }),
  },
  responses: {
    200: {
      description: "Suggestions, best first",
      content: json(z.array(
        Tag.extend({
          alias: z.string().optional().openapi({ description: "The alias that matched `q`" }),
        }).openapi("TagSuggestion"),
      )),
    },
    422: errorResponse("Invalid query"),
  },
});

const route = createRoute({
  method: "get",
  path: "/tags",
  operationId: "listTags",
  tags: ["tags"],
  summary: "List tags that have images",
  request: {
    query: z.object({
      q: z.string().max(MAX_TAG_QUERY_LENGTH).optional().openapi({
        description: "Case-insensitive substring of the name (`at` finds `cat` and `scatter`)",
      }),
      sort: z.enum(["count_desc", "name"]).default("name"),
      min_count: z.coerce.number().int().min(0).max(2_147_483_647).optional(),
      limit: z.coerce.number().int().min(1).max(1000).default(100),
      offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
    }),
  },
  responses: {
    200: { description: "Tags", content: { "application/json": { schema: z.array(Tag) } } },
    422: errorResponse("Invalid query"),
  },
});

/** The tag routes. */
export function tagRoutes(read: ReadModel) {
  return newRouter().openapi(route, async (c) => {
    const q = c.req.valid("query");
    const search = q.q?.trim().toLowerCase();
    return c.json(await read.listTags({ ...q, q: search || undefined }), 200);
  }).openapi(suggestRoute, async (c) => {
    const { q, limit } = c.req.valid("query");
    // Typed text becomes a name the way names are normalised (a partial name may end anywhere).
    const text = q.normalize("NFC").trim().toLowerCase().replace(/\s+/g, "_");
    return c.json(await read.suggestTags(text, limit), 200);
  });
}
