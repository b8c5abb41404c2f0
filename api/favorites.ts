/** `/me/favorites`: the signed-in account's favourite images, most recently favourited first. */
import { createRoute, z } from "@hono/zod-openapi";
import { deleteFavorite, favoritedAmong, listFavorites, putFavorite } from "../db/favorites.ts";
import { retryRead } from "../db/client.ts";
import { AppError } from "../domain/errors.ts";
import { toImageDto } from "../services/read_model.ts";
import type { Services } from "../services/deps.ts";
import { isShortId } from "../domain/short_id.ts";
import { json, notFound } from "./images.ts";
import { guard, principal } from "./permissions.ts";
import { newRouter } from "./router.ts";
import { bearer, errorResponse, Image, ShortIdParam } from "./schemas.ts";

/** The opaque cursor after favourite position `seq`. */
export function encodeFavoriteCursor(seq: string): string {
  return btoa(`f1:${seq}`).replace(/=+$/, "");
}

function decodeFavoriteCursor(cursor: string): string {
  let text = "";
  try {
    text = atob(cursor);
  } catch { /* refused below */ }
  const m = /^f1:(\d{1,18})$/.exec(text);
  if (!m) throw new AppError("bad_cursor", "cursor: not a valid cursor");
  return m[1];
}

/** The favourites routes. */
export function favoriteRoutes(services: Services) {
  const { sql, config } = services;
  const app = newRouter();
  app.openapi(
    createRoute({
      method: "get",
      path: "/me/favorites",
      operationId: "listFavorites",
      tags: ["accounts"],
      summary: "Your favourite images, most recently favourited first",
      security: bearer,
      middleware: [guard(services, "GET /me/favorites")] as const,
      request: {
        query: z.object({
          limit: z.coerce.number().int().min(1).max(200).default(50),
          cursor: z.string().max(64).optional(),
          among: z.string().max(9 * 200).optional().openapi({
            description: "Comma-separated short IDs (at most 200): answer only which of them " +
              "are favourites, as `short_ids` (a page's stars); no paging",
          }),
        }),
      },
      responses: {
        200: {
          description: 'One page (or, with `among`, `{"short_ids"}`)',
          content: json(z.union([
            z.object({ items: z.array(Image), next_cursor: z.string().nullable() }),
            z.object({ short_ids: z.array(z.string()) }),
          ])),
        },
        401: errorResponse("Not signed in"),
        422: errorResponse("Invalid query"),
      },
    }),
    async (c) => {
      const { limit, cursor, among } = c.req.valid("query");
      if (among !== undefined) {
        const ids = [...new Set(among.split(",").filter(isShortId))].slice(0, 200);
        const found = ids.length ? await favoritedAmong(sql, principal(c).userId, ids) : [];
        c.header("Cache-Control", "no-store");
        return c.json({ short_ids: found }, 200);
      }
      const before = cursor ? decodeFavoriteCursor(cursor) : null;
      const who = principal(c);
      const rows = await retryRead(() => listFavorites(sql, who.userId, before, limit + 1));
      const items = rows.slice(0, limit);
      c.header("Cache-Control", "no-store");
      return c.json({
        items: items.map((r) => toImageDto(r, config.S3_PUBLIC_BASE_URL)),
        next_cursor: rows.length > limit ? encodeFavoriteCursor(items.at(-1)!.fav_seq) : null,
      }, 200);
    },
  );
  for (const method of ["put", "delete"] as const) {
    const key = method === "put" ? "PUT /me/favorites/:id" : "DELETE /me/favorites/:id";
    app.openapi(
      createRoute({
        method,
        path: "/me/favorites/{id}",
        operationId: method === "put" ? "addFavorite" : "removeFavorite",
        tags: ["accounts"],
        summary: method === "put"
          ? "Favourite an image (again: no change)"
          : "Unfavourite an image (not a favourite: no change)",
        security: bearer,
        middleware: [guard(services, key)] as const,
        request: { params: ShortIdParam },
        responses: {
          204: { description: "Done" },
          401: errorResponse("Not signed in"),
          403: errorResponse("A key without the `edit` scope (`forbidden`)"),
          404: errorResponse("No such image"),
        },
      }),
      async (c) => {
        const { id } = c.req.valid("param");
        const who = principal(c);
        const change = method === "put" ? putFavorite : deleteFavorite;
        if (!isShortId(id) || !await change(sql, who.userId, id)) throw notFound();
        return c.body(null, 204);
      },
    );
  }
  return app;
}
