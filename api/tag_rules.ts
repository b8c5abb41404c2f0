/**
 * The tag rules (issue 20), read side: the public lists of aliases (`/tag-aliases`) and
 * implications (`/tag-implications`), and what the write routes (tag_rule_writes.ts) share.
 * Refusals are 422 (404 for an unknown name) with a stable `code` (the table of domain/errors.ts).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { listAliases, listImplications } from "../db/tag_rules.ts";
import type { Services } from "../services/deps.ts";
import { forField } from "../domain/errors.ts";
import { normalizeTag } from "../domain/tag_names.ts";
import { json } from "./images.ts";
import { newRouter } from "./router.ts";
import { errorResponse } from "./schemas.ts";

export const TagAlias = z.object({
  alias: z.string().openapi({ example: "lol" }),
  target: z.string().openapi({ example: "laughing" }),
}).openapi("TagAlias");

export const TagImplication = z.object({
  tag: z.string().openapi({ example: "facepalm" }),
  implies: z.array(z.string()).openapi({ example: ["disappointed"] }),
}).openapi("TagImplication");

const Page = z.object({
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

export const nameParam = (name: string, example: string) =>
  z.object({
    [name]: z.string().max(256).openapi({ param: { name, in: "path" }, example }),
  });

export const refusals = (what: string) => ({
  401: errorResponse("Not signed in"),
  403: errorResponse("Not an admin, or a key without `edit` (`forbidden`)"),
  413: errorResponse("Body over 64 KiB (`code`: `body_too_large`)"),
  422: errorResponse(what),
});

/** A normalised tag name, or 422 `invalid_tag_name` naming the field. */
export function nameOrThrow(field: string, raw: string): string {
  return forField(field, "invalid_tag_name", () => normalizeTag(raw));
}

/** The public lists of aliases and implications (the edge reader serves them too). */
export function tagRuleReadRoutes({ sql }: Pick<Services, "sql">) {
  const app = newRouter();
  app.openapi(
    createRoute({
      method: "get",
      path: "/tag-aliases",
      operationId: "listTagAliases",
      tags: ["tags"],
      summary: "List aliases, by alias name",
      request: { query: Page },
      responses: {
        200: { description: "Aliases", content: json(z.array(TagAlias)) },
        422: errorResponse("Invalid query"),
      },
    }),
    async (c) => c.json(await listAliases(sql, c.req.valid("query")), 200),
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/tag-implications",
      operationId: "listTagImplications",
      tags: ["tags"],
      summary: "List implications, one entry per implying tag, by tag name",
      request: { query: Page },
      responses: {
        200: { description: "Implications", content: json(z.array(TagImplication)) },
        422: errorResponse("Invalid query"),
      },
    }),
    async (c) => c.json(await listImplications(sql, c.req.valid("query")), 200),
  );
  return app;
}
