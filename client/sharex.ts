/**
 * A ShareX custom uploader (`.sxcu`) for a personal API key: it uploads to `POST /api/v1/images`
 * as the multipart field `file`, with the key as the bearer, and copies the link to the bytes.
 * The link is `{origin}/api/v1/images/{json:short_id}/file`: built from the upload answer's
 * `short_id` with ShareX's `{json:...}` syntax, it is absolute whatever the board's storage
 * (`file_url` is a relative path unless S3_PUBLIC_BASE_URL is set, and the `/{short_id}.{ext}`
 * link needs an extension that ShareX cannot derive from `content_type`). Browser-safe.
 */

/** The `.sxcu` JSON of key `key` for the board at `origin`. */
export function sharexUploader(origin: string, key: string): Record<string, unknown> {
  const host = new URL(origin).host;
  return {
    Version: "15.0.0",
    Name: `Reactions (${host})`,
    DestinationType: "ImageUploader",
    RequestMethod: "POST",
    RequestURL: `${origin}/api/v1/images`,
    Headers: { Authorization: `Bearer ${key}` },
    Body: "MultipartFormData",
    FileFormName: "file",
    URL: `${origin}/api/v1/images/{json:short_id}/file`,
    ThumbnailURL: `${origin}/api/v1/images/{json:short_id}/thumbnail`,
    ErrorMessage: "{json:detail}",
  };
}

/** The file name of the `.sxcu` for `origin`. */
export function sharexFileName(origin: string): string {
  return `reactions-${new URL(origin).host.replace(/[^A-Za-z0-9.-]/g, "_")}.sxcu`;
}
