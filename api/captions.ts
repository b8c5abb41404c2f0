/** `PATCH /images/{id}`: a person corrects (or clears) the caption text, behind requireAuth. */
import { createRoute, z } from "@hono/zod-openapi";
import { forField } from "../domain/errors.ts";
import type { Services } from "../services/deps.ts";
import { isShortId } from "../domain/short_id.ts";
import { MAX_CAPTION_CHARS, normalizeCaption } from "../domain/caption_text.ts";
import type { ReadModel } from "../domain/types.ts";
import { clearCaption, writeCaption } from "../services/captions/edit.ts";
import { json, notFound } from "./images.ts";
import { guard, principal } from "./permissions.ts";
import { recordAudit } from "../services/audit.ts";
import { newRouter } from "./router.ts";
import { bearer, errorResponse, Image, ShortIdParam } from "./schemas.ts";

const CaptionChange = z.object({
  text: z.string().nullable().openapi({
    description: `The words printed on the image, at most ${MAX_CAPTION_CHARS} characters; ` +
      "recognition never overwrites it. `null` hands the caption back to recognition, which " +
      "reads it again",
    example: "this is fine",
  }),
}).strict().openapi("CaptionChange");

/** The caption write route. */
export function captionRoutes(services: Services, read: ReadModel) {
  return newRouter().openapi(
    createRoute({
      method: "patch",
      path: "/images/{id}",
      operationId: "updateImage",
      tags: ["images"],
      summary: "Correct an image's caption text (`text`), or give it back to recognition",
      security: bearer,
      middleware: [guard(services, "PATCH /images/:id")] as const,
      request: {
        params: ShortIdParam,
        body: { content: { "application/json": { schema: CaptionChange } }, required: true },
      },
      responses: {
        200: { description: "The image with its caption", content: json(Image) },
        401: errorResponse("Not signed in"),
        403: errorResponse("A key without the `edit` scope (`forbidden`)"),
        404: errorResponse("No such image"),
        413: errorResponse("Body over 64 KiB (`code`: `body_too_large`)"),
        422: errorResponse(`Invalid fields, or text over ${MAX_CAPTION_CHARS} characters`),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const { text } = c.req.valid("json");
      if (!isShortId(id)) throw notFound();
      const image = text === null ? await clearCaption(services, read, id) : await writeCaption(
        services,
        read,
        id,
        forField("text", "caption_text_invalid", () => normalizeCaption(text)),
      );
      if (!image) throw notFound();
      await recordAudit(services.sql, principal(c), "image.caption", id, {
        cleared: text === null,
      });
      return c.json(image, 200);
    },
  );
}
