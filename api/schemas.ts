/** The zod schemas of the API's JSON, which also make the OpenAPI document. */
import { z } from "@hono/zod-openapi";

/** A tag with its image count. */
export const Tag = z.object({
  name: z.string().openapi({ example: "facepalm" }),
  image_count: z.number().int().openapi({ example: 12 }),
}).openapi("Tag");

/** An image (docs/api.md#images-and-tag-names). */
export const Image = z.object({
  short_id: z.string().openapi({ example: "aZ3kP9qX" }),
  hash: z.string().openapi({ description: "SHA-256 of the content, hex" }),
  content_type: z.string().openapi({ example: "image/png" }),
  size_bytes: z.number().int(),
  width: z.number().int(),
  height: z.number().int(),
  thumbnail_key: z.string().nullable(),
  tags: z.array(Tag),
  file_url: z.string().openapi({ example: "/api/v1/images/aZ3kP9qX/file" }),
  thumbnail_url: z.string().openapi({ example: "/api/v1/images/aZ3kP9qX/thumbnail" }),
  text: z.string().nullable().openapi({
    description: "The words printed on the image, recognised in the background after an " +
      'upload (English, printed text) or written by a person; null until recognised, "" when ' +
      "none were found",
    example: "THIS IS FINE",
  }),
  text_source: z.enum(["ocr", "manual"]).nullable().openapi({
    description: "`ocr`: recognised; `manual`: written by a person, never overwritten by " +
      "recognition; null with `text`",
  }),
  created_at: z.string().openapi({ format: "date-time" }),
  uploaded_by: z.string().nullable().openapi({
    description: "The username of who uploaded it; null for images from before accounts and " +
      "for restored ones that named nobody known here",
    example: "alice",
  }),
  favorite_count: z.number().int().openapi({ description: "Accounts that favourited it" }),
  send_count: z.number().int().openapi({
    description: "Sends from a chat and copies from its page by signed-in people, each person " +
      "or chat user counted once a day",
  }),
  duration_seconds: z.number().nullable().openapi({
    description: "A video's length in seconds (MP4 or WebM); null for images, GIFs included",
    example: 3.2,
  }),
  video_url: z.string().nullable().openapi({
    description:
      "The MP4 rendition of a moving image (GIF, animated WebP, MP4, WebM: H.264, no sound), made " +
      "in the background after the upload; null until made and for stills",
    example: "/api/v1/images/aZ3kP9qX/video.mp4",
  }),
  preview_url: z.string().nullable().openapi({
    description: "The animated preview of a moving image (an animated WebP, at most 400 px and " +
      "6 s) that the library plays on hover; null until made and for stills",
    example: "/api/v1/images/aZ3kP9qX/preview",
  }),
}).openapi("Image");

/** A plain error body. */
export const ErrorBody = z.object({ detail: z.string() }).passthrough().openapi("Error");

/** The short ID path parameter. */
export const ShortIdParam = z.object({
  id: z.string().openapi({ param: { name: "id", in: "path" }, example: "aZ3kP9qX" }),
});

/** A JSON error response of the OpenAPI document. */
export const errorResponse = (description: string) => ({
  description,
  content: { "application/json": { schema: ErrorBody } },
});

/** The bearer requirement of write routes in the OpenAPI document. */
export const bearer = [{ bearer: [] }];
