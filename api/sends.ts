/**
 * `POST /images/{id}/sends` (issue 43): the image page counts a signed-in person's copy of an
 * image as a send, once per person per image per day (db/sends.ts), like a chat's Send.
 */
import { createRoute } from "@hono/zod-openapi";
import { recordSend } from "../db/sends.ts";
import { AppError } from "../domain/errors.ts";
import { isShortId } from "../domain/short_id.ts";
import type { Services } from "../services/deps.ts";
import { guard, principal } from "./permissions.ts";
import { newRouter } from "./router.ts";
import { bearer, errorResponse, ShortIdParam } from "./schemas.ts";

/** The send-counting route. */
export function sendRoutes(services: Services) {
  const app = newRouter();
  app.openapi(
    createRoute({
      method: "post",
      path: "/images/{id}/sends",
      operationId: "recordImageSend",
      tags: ["images"],
      summary: "Count a copy of the image as a send (once per person per image per day)",
      security: bearer,
      middleware: [guard(services, "POST /images/:id/sends")] as const,
      request: { params: ShortIdParam },
      responses: {
        204: { description: "Counted, or already counted today" },
        401: errorResponse("Not signed in"),
        404: errorResponse("No such image"),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const who = principal(c);
      const result = isShortId(id)
        ? await recordSend(services.sql, id, `account:${who.userId}`)
        : "missing";
      if (result === "missing") throw new AppError("not_found", "Image not found");
      return c.body(null, 204);
    },
  );
  return app;
}
