/**
 * Sends one file from disk to `POST /api/v1/images` as a multipart form, with memory bounded by
 * the file (never the collection): a file up to BUFFER_MAX_BYTES is read once and sent with its
 * length (the service reads such a body in place); a larger one is streamed from disk, read
 * again for each retry.
 */
import type { ImageDto } from "../../domain/types.ts";
import { BoardApiError, type BoardClient } from "./client.ts";

/** Files up to this size are read into memory (one per upload in flight). */
export const BUFFER_MAX_BYTES = 32 * 1024 * 1024;

/** The text fields of an upload form. */
export interface UploadFields {
  tags: string[];
  short_id?: string;
  created_at?: string;
  /** A restored caption and who wrote it (`ocr` or `manual`). */
  text?: string;
  text_source?: string;
  /** A restore's uploader: a username, or "" for nobody (an admin's restore only). */
  uploaded_by?: string;
}

/** The outcome of one upload: a new image (201) or the one with this content (200). */
export interface Uploaded {
  created: boolean;
  image: ImageDto;
}

const enc = new TextEncoder();

/** A file name safe inside a quoted Content-Disposition parameter. */
function quotedName(name: string): string {
  return name.replace(/["\\\r\n]/g, "_");
}

/** The multipart framing around a file: what goes before its bytes and after them. */
export function multipartFraming(
  fields: UploadFields,
  fileName: string,
  contentType: string,
): { head: Uint8Array; tail: Uint8Array; contentType: string } {
  const boundary = `----board-import-${crypto.randomUUID()}`;
  const field = (name: string, value: string) =>
    `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  let head = "";
  if (fields.tags.length) head += field("tags", fields.tags.join(","));
  if (fields.short_id) head += field("short_id", fields.short_id);
  if (fields.created_at) head += field("created_at", fields.created_at);
  if (fields.text !== undefined) head += field("text", fields.text);
  if (fields.text_source) head += field("text_source", fields.text_source);
  if (fields.uploaded_by !== undefined) {
    // A name is one line of letters: anything else (a line break would start another part) is
    // sent as nobody.
    const name = /^[\w.-]{0,64}$/.test(fields.uploaded_by) ? fields.uploaded_by : "";
    head += field("uploaded_by", name);
  }
  head += `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${
    quotedName(fileName)
  }"\r\nContent-Type: ${contentType}\r\n\r\n`;
  return {
    head: enc.encode(head),
    tail: enc.encode(`\r\n--${boundary}--\r\n`),
    contentType: `multipart/form-data; boundary=${boundary}`,
  };
}

/** The whole form in one buffer. */
function joined(head: Uint8Array, bytes: Uint8Array, tail: Uint8Array): Uint8Array<ArrayBuffer> {
  const body = new Uint8Array(head.length + bytes.length + tail.length);
  body.set(head, 0);
  body.set(bytes, head.length);
  body.set(tail, head.length + bytes.length);
  return body;
}

/** The form streamed from disk: framing, the file's chunks, framing. */
async function streamed(path: string, head: Uint8Array, tail: Uint8Array) {
  const file = await Deno.open(path);
  const reader = file.readable.getReader();
  let stage = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      if (stage === 0) {
        stage = 1;
        controller.enqueue(head);
        return;
      }
      if (stage === 1) {
        const { value, done } = await reader.read();
        if (!done) return controller.enqueue(value);
        stage = 2;
        controller.enqueue(tail);
        return;
      }
      controller.close();
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/**
 * Uploads the file at `path` (its bytes already read when `bytes` is given). Resolves with the
 * image; a refusal is a BoardApiError (after the client's retries).
 */
export async function uploadFile(
  client: BoardClient,
  file: { path: string; name: string; size: number; contentType: string; bytes?: Uint8Array },
  fields: UploadFields,
): Promise<Uploaded> {
  const { head, tail, contentType } = multipartFraming(fields, file.name, file.contentType);
  let bytes = file.bytes;
  if (!bytes && file.size <= BUFFER_MAX_BYTES) bytes = await Deno.readFile(file.path);
  const body = bytes ? joined(head, bytes, tail) : null;
  const res = await client.request("/api/v1/images", {
    method: "POST",
    headers: { "content-type": contentType },
    body: () => body ?? streamed(file.path, head, tail),
    bodyBytes: head.length + file.size + tail.length,
  });
  const image = await res.json() as ImageDto;
  if (res.status !== 200 && res.status !== 201) throw new BoardApiError(res.status, null);
  return { created: res.status === 201, image };
}
