/**
 * `/images` writes, all behind requireAuth: upload, tag edits and delete. Kept apart from the
 * read routes so the edge reader's module graph holds no upload or thumbnail code.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { updateImageTags } from "../db/images.ts";
import { toImageDto } from "../services/read_model.ts";
import type { Services } from "../services/deps.ts";
import { isShortId } from "../domain/short_id.ts";
import type { ReadModel } from "../domain/types.ts";
import { deleteImage } from "../services/delete_image.ts";
import { uploadImage } from "../services/upload/upload_image.ts";
import { json, notFound, tagsOrThrow } from "./images.ts";
import { guard, principal } from "./permissions.ts";
import { recordAudit } from "../services/audit.ts";
import { userIdByName } from "../db/users.ts";
import { AppError } from "../domain/errors.ts";
import { newRouter } from "./router.ts";
import { bearer, errorResponse, Image, ShortIdParam } from "./schemas.ts";
import { UploadedImage } from "./similar.ts";
import { readUploadForm } from "./upload_body.ts";
import { READ_SLOT_WAIT_MS, READ_SLOTS, UploadGate } from "./upload_gate.ts";
import { Slots } from "../domain/slots.ts";

const TagChange = z.union([
  z.object({ tags: z.array(z.string()) }).strict(),
  z.object({ add: z.array(z.string()).optional(), remove: z.array(z.string()).optional() })
    .strict(),
]).openapi("TagChange", {
  description: '`{"tags": [...]}` replaces the set; `{"add": [...], "remove": [...]}` edits it',
});

/** The image write routes. */
export function imageWriteRoutes(services: Services, read: ReadModel) {
  const { config, sql, store } = services;
  const app = newRouter();
  const gate = new UploadGate(64);
  const reading = new Slots(READ_SLOTS, READ_SLOT_WAIT_MS);

  app.openAPIRegistry.registerPath({
    method: "post",
    path: "/images",
    operationId: "uploadImage",
    tags: ["images"],
    summary: "Upload an image (201 new; 200 when the same content exists: the tags are added)",
    security: bearer,
    request: {
      body: {
        content: {
          "multipart/form-data": {
            schema: z.object({
              file: z.any().openapi({ type: "string", format: "binary" }),
              tags: z.string().optional().openapi({ description: "Comma-separated; may repeat" }),
              short_id: z.string().optional().openapi({
                description: "Restore: the image's short ID (8 base62 characters), honoured when " +
                  "no image holds it; another image's ID answers 409 `short_id_taken`",
                example: "aZ3kP9qX",
              }),
              created_at: z.string().optional().openapi({
                format: "date-time",
                description: "Restore: the image's creation date, with a time zone, not in the " +
                  "future (millisecond precision); used only when the image is created",
              }),
              text: z.string().optional().openapi({
                description: "Restore: the image's caption text (`text` of Image), used only " +
                  "when the image is created; then it is not recognised again",
              }),
              text_source: z.enum(["ocr", "manual"]).optional().openapi({
                description: "Restore: who wrote `text` (default `manual`)",
              }),
              uploaded_by: z.string().optional().openapi({
                description: "Restore (an admin only): the username to attribute a new image " +
                  "to; an unknown name or an empty value attributes it to nobody. Without " +
                  "it the caller is the uploader",
              }),
            }),
          },
        },
      },
    },
    responses: {
      201: { description: "Created", content: json(UploadedImage) },
      200: { description: "Already here; the tags were added", content: json(UploadedImage) },
      400: errorResponse("Not a multipart body"),
      401: errorResponse("Not signed in"),
      403: errorResponse("A key without `upload`, or `uploaded_by` from a member (`forbidden`)"),
      413: errorResponse("Larger than MAX_UPLOAD_BYTES (`code`, `detail`, `max_bytes`)"),
      409: errorResponse(
        "`short_id` belongs to an image with other content (`code`: `short_id_taken`)",
      ),
      415: errorResponse("Not a JPEG, PNG, GIF, WebP or AVIF image"),
      422: errorResponse(
        "Invalid fields, more pixels than MAX_IMAGE_PIXELS (`code`: `too_many_pixels`), or more " +
          "than 50 tags on the image (`code`: `too_many_tags`, `max_tags`)",
      ),
      503: errorResponse("Storage or database down, or too busy"),
    },
  });
  app.post("/images", guard(services, "POST /images"), async (c) => {
    using _slot = gate.enter();
    const who = principal(c);
    let form;
    {
      using _reading = await reading.take();
      form = await readUploadForm(c.req.raw, config.MAX_UPLOAD_BYTES);
    }
    let uploaderId: string | null = who.userId;
    if (form.uploadedBy !== undefined) {
      if (who.role !== "admin") {
        throw new AppError("forbidden", "uploaded_by: only an admin may attribute an upload");
      }
      uploaderId = form.uploadedBy === null ? null : await userIdByName(sql, form.uploadedBy);
    }
    const { created, image, similar } = await uploadImage(
      { ...services, log: c.get("log") },
      form.bytes,
      form.tags,
      {
        shortId: form.shortId,
        createdAt: form.createdAt,
        caption: form.caption,
        sha256: form.sha256,
        uploaderId,
      },
    );
    await recordAudit(sql, who, "image.upload", image.short_id, {
      created,
      tags: form.tags,
    });
    const dto = toImageDto(image, config.S3_PUBLIC_BASE_URL);
    if (created) c.header("Location", `/api/v1/images/${dto.short_id}`);
    return c.json({ ...dto, similar }, created ? 201 : 200);
  });

  app.openapi(
    createRoute({
      method: "patch",
      path: "/images/{id}/tags",
      operationId: "updateImageTags",
      tags: ["images"],
      summary: "Replace or edit an image's tags",
      security: bearer,
      middleware: [guard(services, "PATCH /images/:id/tags")] as const,
      request: {
        params: ShortIdParam,
        body: { content: { "application/json": { schema: TagChange } }, required: true },
      },
      responses: {
        200: { description: "The image with its new tags", content: json(Image) },
        401: errorResponse("Not signed in"),
        403: errorResponse("A key without the `edit` scope (`forbidden`)"),
        404: errorResponse("No such image"),
        413: errorResponse("Body over 64 KiB (`code`: `body_too_large`)"),
        422: errorResponse(
          "Invalid tag names, or more than 50 tags on the image (`code`: `too_many_tags`)",
        ),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      const body = c.req.valid("json");
      const change = "tags" in body
        ? { replace: tagsOrThrow(body.tags) }
        : { add: tagsOrThrow(body.add ?? []), remove: tagsOrThrow(body.remove ?? []) };
      if (!isShortId(id) || !await updateImageTags(sql, id, change)) throw notFound();
      await recordAudit(sql, principal(c), "image.tags", id, change);
      const image = await read.getImage(id);
      if (!image) throw notFound();
      return c.json(image, 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/images/{id}",
      operationId: "deleteImage",
      tags: ["images"],
      summary: "Delete an image with its original and thumbnail objects",
      security: bearer,
      middleware: [guard(services, "DELETE /images/:id")] as const,
      request: { params: ShortIdParam },
      responses: {
        204: { description: "Deleted" },
        401: errorResponse("Not signed in"),
        403: errorResponse(
          "A member deleting another's upload, or a key without `delete` (`forbidden`)",
        ),
        404: errorResponse("No such image"),
      },
    }),
    async (c) => {
      const { id } = c.req.valid("param");
      if (!await deleteImage({ sql, store, log: c.get("log") }, id)) throw notFound();
      await recordAudit(sql, principal(c), "image.delete", id);
      return c.body(null, 204);
    },
  );
  return app;
}
