/** Test images made on the fly with sharp, and small HTTP helpers for the API. */
import sharp from "sharp";
import type { ImageDto } from "../../domain/types.ts";
import { TEST_PASSWORD } from "./app.ts";

type Fetcher = { request: (path: string, init?: RequestInit) => Response | Promise<Response> };

/** A random colour, so that every generated image has its own content hash. */
export function randomColor() {
  const c = crypto.getRandomValues(new Uint8Array(3));
  return { r: c[0], g: c[1], b: c[2] };
}

/** A solid-colour image in `format` (unique content unless a colour is given). */
export async function makeImage(
  format: "jpeg" | "png" | "gif" | "webp" | "avif" = "png",
  width = 640,
  height = 480,
  background = randomColor(),
): Promise<Uint8Array> {
  const img = sharp({ create: { width, height, channels: 3, background } });
  return new Uint8Array(await img[format]().toBuffer());
}

/** A random tag name. */
export function randomTag(prefix = "tag"): string {
  return `${prefix}_${crypto.randomUUID().slice(0, 8)}`;
}

/** Signs in through the login endpoint and returns the bearer header. */
export async function authHeader(app: Fetcher): Promise<Record<string, string>> {
  const res = await app.request("/api/v1/auth/token", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ username: "admin", password: TEST_PASSWORD }),
  });
  if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
  const { access_token } = await res.json();
  return { authorization: `Bearer ${access_token}` };
}

/** A multipart upload form. */
export function uploadForm(
  bytes: Uint8Array,
  tags: string[] = [],
  opts: { name?: string; type?: string } = {},
): FormData {
  const form = new FormData();
  form.append(
    "file",
    new File([bytes as BlobPart], opts.name ?? "image.bin", {
      type: opts.type ?? "application/octet-stream",
    }),
  );
  for (const t of tags) form.append("tags", t);
  return form;
}

/** POSTs an upload with the given headers. */
export function upload(
  app: Fetcher,
  headers: Record<string, string>,
  bytes: Uint8Array,
  tags: string[] = [],
  opts: { name?: string; type?: string } = {},
): Promise<Response> {
  return Promise.resolve(
    app.request("/api/v1/images", { method: "POST", headers, body: uploadForm(bytes, tags, opts) }),
  );
}

/** What `uploadCaptioned` makes: its format, size and tags. */
export interface CaptionedImage {
  format?: "png" | "gif";
  width?: number;
  height?: number;
  tags?: string[];
}

/**
 * Uploads a new image whose caption is `text`, set as a person's (`manual`), so that no
 * recognition job is sent, and returns the image's JSON; anything but 201 throws.
 */
export async function uploadCaptioned(
  app: Fetcher,
  headers: Record<string, string>,
  text: string,
  opts: CaptionedImage = {},
): Promise<ImageDto> {
  const bytes = await makeImage(opts.format ?? "png", opts.width ?? 16, opts.height ?? 12);
  const form = uploadForm(bytes, opts.tags ?? []);
  form.append("text", text);
  form.append("text_source", "manual");
  const res = await app.request("/api/v1/images", { method: "POST", headers, body: form });
  if (res.status !== 201) throw new Error(`upload failed: ${res.status} ${await res.text()}`);
  return await res.json();
}
