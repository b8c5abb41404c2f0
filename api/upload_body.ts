/**
 * Reads an upload's multipart body with bounded memory: refused up front when Content-Length
 * is over the limit, and cut off while streaming as soon as the bytes read pass it, so no
 * client can make the service buffer more than MAX_UPLOAD_BYTES (plus the form's own framing).
 * The form is parsed (adapters/http/multipart.ts, the file a view of the body) and the file hashed
 * read by read, so a burst of uploads never holds the event loop for a whole body.
 */
import { createHash } from "node:crypto";
import { AppError, asAppError, forField } from "../domain/errors.ts";
import { yieldIfBusy } from "../adapters/event_loop.ts";
import { multipartBoundary, MultipartParser } from "../adapters/http/multipart.ts";
import { isShortId } from "../domain/short_id.ts";
import type { CaptionSource } from "../db/caption_words.ts";
import { normalizeCaption } from "../domain/caption_text.ts";
import { parseTagList } from "../domain/tag_names.ts";

/** Room for multipart framing and the other fields, on top of the file's own limit. */
export const FORM_OVERHEAD_BYTES = 64 * 1024;

/** What an upload form carries. */
export interface UploadForm {
  bytes: Uint8Array;
  /** Hex SHA-256 of `bytes`, computed while they streamed in. */
  sha256: string;
  tags: string[];
  /** A restore's short ID (honoured only when free), or null for a random one. */
  shortId: string | null;
  /** A restore's creation date (not in the future), or null for now. */
  createdAt: Date | null;
  /** A restore's caption, or null: recognition writes it. */
  caption: { text: string; source: CaptionSource } | null;
  /**
   * A restore's uploader (`uploaded_by`): a username, null when the field was sent empty, absent
   * when not sent (the caller is the uploader).
   */
  uploadedBy?: string | null;
}

/** An RFC 3339 date-time with a time zone, as the API writes `created_at`. */
const DATE_TIME_RE =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{1,6})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/;

/** The one text value of the field `name`, or null when absent; 422 when repeated. */
function textField(parts: { name: string; data: Uint8Array }[], name: string): string | null {
  const found = parts.filter((p) => p.name === name);
  if (found.length === 0) return null;
  if (found.length > 1) throw new AppError("invalid_field", `${name}: give it at most once`);
  return new TextDecoder().decode(found[0].data).trim();
}

/**
 * The optional `short_id` and `created_at` of a restore: a short ID's shape (8 base62
 * characters), and a date-time with a zone that is a real date, not before 1970 and not in the
 * future. Empty values count as absent.
 */
export function restoreFields(
  parts: { name: string; data: Uint8Array }[],
  now = Date.now(),
): Pick<UploadForm, "shortId" | "createdAt" | "caption" | "uploadedBy"> {
  const shortId = textField(parts, "short_id") || null;
  if (shortId !== null && !isShortId(shortId)) {
    throw new AppError("invalid_field", "short_id: must be 8 characters of 0-9, A-Z and a-z");
  }
  const created = textField(parts, "created_at") || null;
  let createdAt: Date | null = null;
  if (created !== null) {
    createdAt = new Date(created);
    // Date() rolls 2026-02-30 over to March: the day must read back as it was written.
    const day = created.slice(0, 10);
    const valid = DATE_TIME_RE.test(created) && createdAt.getTime() >= 0 &&
      new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) === day;
    if (!valid) {
      throw new AppError(
        "invalid_field",
        "created_at: must be a date-time with a time zone, e.g. 2026-11-23T12:34:56.789Z",
      );
    }
    if (createdAt.getTime() > now) {
      throw new AppError("invalid_field", "created_at: must not be in the future");
    }
  }
  const uploader = textField(parts, "uploaded_by");
  const uploadedBy = uploader === null ? undefined : uploader || null;
  if (uploadedBy && uploadedBy.length > 64) {
    throw new AppError("invalid_field", "uploaded_by: at most 64 characters");
  }
  return { shortId, createdAt, caption: captionField(parts), uploadedBy };
}

/**
 * A restore's caption: `text` (normalised, at most MAX_CAPTION_CHARS; "" is a caption with no words)
 * and `text_source` (`ocr` or `manual`, the default). Absent `text`: null.
 */
function captionField(parts: { name: string; data: Uint8Array }[]): UploadForm["caption"] {
  const raw = parts.filter((p) => p.name === "text");
  const source = textField(parts, "text_source") || null;
  if (raw.length > 1) throw new AppError("invalid_field", "text: give it at most once");
  if (source !== null && source !== "ocr" && source !== "manual") {
    throw new AppError("invalid_field", "text_source: must be ocr or manual");
  }
  if (raw.length === 0) {
    if (source !== null) throw new AppError("invalid_field", "text_source: given without text");
    return null;
  }
  const text = new TextDecoder().decode(raw[0].data);
  const normalised = forField("text", "caption_text_invalid", () => normalizeCaption(text));
  return { text: normalised, source: source ?? "manual" };
}

/** The 413 of docs/api.md#errors, with the limit at the top level of the body. */
export function tooLarge(maxBytes: number): AppError {
  return new AppError(
    "upload_too_large",
    `The file is larger than the limit of ${maxBytes} bytes`,
    { fields: { max_bytes: maxBytes } },
  );
}

/** The most one read takes in. */
const READ_BYTES = 256 * 1024;

/** The first buffer of a body without a Content-Length; it doubles as the bytes arrive. */
const FIRST_CAPACITY = 256 * 1024;

/**
 * Reads the body into one buffer, parsing the form after each read and hashing the `file` part's
 * bytes as they arrive (`onRead`), so that nothing is left to do over the whole body once its
 * last byte is in, and no step holds the event loop for a whole body (B3). Refused with 413
 * as soon as it passes `limit` bytes, and with 400 (any other error) when it disagrees with its
 * Content-Length (already checked against the limit). A byte stream (Deno.serve's bodies) is
 * read in place, a fraction of the event loop's time that copying its chunks takes (bench B2;
 * figures in bench/RESULTS.md#notes-moved-from-code-comments).
 */
async function readBody(
  body: ReadableStream<Uint8Array>,
  limit: number,
  maxBytes: number,
  declared: number | null,
  onRead: (buffer: Uint8Array, length: number) => void,
): Promise<Uint8Array> {
  const source = byteSource(body);
  let buffer = new ArrayBuffer(declared ?? Math.min(FIRST_CAPACITY, limit + 1));
  let at = 0;
  try {
    for (;;) {
      if (at === buffer.byteLength) {
        if (declared !== null) {
          if (!await source.done()) throw new Error("the body is longer than its Content-Length");
          break;
        }
        if (at > limit) throw tooLarge(maxBytes);
        // Growing copies what is in (at most twice the body in all, a few ms for the last step
        // of a 20 MB body sent without a length, which browsers never do).
        const grown = new ArrayBuffer(Math.min(at * 2, limit + 1));
        new Uint8Array(grown).set(new Uint8Array(buffer));
        buffer = grown;
      }
      // At most READ_BYTES a read: the runtime copies what the socket has buffered into the view
      // in one step, and a view of megabytes made that one long stretch per upload.
      const room = Math.min(READ_BYTES, buffer.byteLength - at);
      const read = await source.read(new Uint8Array(buffer, at, room));
      buffer = read.view.buffer as ArrayBuffer; // a read into a view transfers its buffer
      if (read.done) break;
      at += read.view.length;
      onRead(new Uint8Array(buffer), at);
      await yieldIfBusy();
    }
    if (declared !== null && at !== declared) {
      throw new Error("the body is shorter than its Content-Length");
    }
    return new Uint8Array(buffer, 0, at);
  } catch (e) {
    await source.cancel();
    throw e;
  }
}

/** One read into a view: the view it filled (holding the buffer now), or done. */
interface ReadInto {
  view: Uint8Array;
  done: boolean;
}

/** Reads a stream into the views it is given: in place for a byte stream, else by copying. */
function byteSource(body: ReadableStream<Uint8Array>) {
  let byob: ReadableStreamBYOBReader | null = null;
  try {
    byob = body.getReader({ mode: "byob" });
  } catch {
    // Not a byte stream (a Request built in-process): copy its chunks instead.
  }
  if (byob) {
    const reader = byob;
    return {
      async read(into: Uint8Array<ArrayBuffer>): Promise<ReadInto> {
        const { value, done } = await reader.read(into);
        // A cancelled stream gives no view back; its buffer is lost with it.
        if (!value) throw new Error("the body ended unexpectedly");
        return { view: value, done };
      },
      async done() {
        return (await reader.read(new Uint8Array(1))).done;
      },
      cancel: () => reader.cancel().catch(() => {}),
    };
  }
  const reader = body.getReader();
  let rest: Uint8Array | null = null;
  const next = async () => {
    while (!rest?.length) {
      const { value, done } = await reader.read();
      if (done) return null;
      rest = value;
    }
    return rest;
  };
  return {
    async read(into: Uint8Array<ArrayBuffer>): Promise<ReadInto> {
      const chunk = await next();
      if (!chunk) return { view: into, done: true };
      const n = Math.min(chunk.length, into.length);
      into.set(chunk.subarray(0, n));
      rest = chunk.subarray(n);
      return { view: into.subarray(0, n), done: false };
    },
    async done() {
      return (await next()) === null;
    },
    cancel: () => reader.cancel().catch(() => {}),
  };
}

/**
 * Parses `req` as an upload form; every refusal is an AppError with its status in
 * docs/api.md#errors.
 */
export async function readUploadForm(req: Request, maxBytes: number): Promise<UploadForm> {
  const boundary = multipartBoundary(req.headers.get("content-type"));
  if (!boundary) {
    throw new AppError("bad_request", "Expected a multipart/form-data body with a `file` field");
  }
  const limit = maxBytes + FORM_OVERHEAD_BYTES;
  const header = req.headers.get("content-length");
  const declared = header !== null && /^\d+$/.test(header) ? Number(header) : null;
  if (declared !== null && declared > limit) throw tooLarge(maxBytes);
  if (!req.body) throw new AppError("invalid_field", "file: a file is required");

  // The first `file` part is hashed as it streams in; a second one is refused below anyway.
  let filePart = -1;
  const hash = createHash("sha256");
  const parser = new MultipartParser(boundary, (data, part, name) => {
    if (filePart === -1 && name === "file") filePart = part;
    if (part === filePart) hash.update(data);
  });
  let parts;
  try {
    const body = await readBody(req.body, limit, maxBytes, declared, (buffer, length) => {
      if (!parser.done) parser.advance(buffer, length);
    });
    parts = parser.finish(body);
  } catch (e) {
    // The size limit's 413 passes; anything else that broke the reading is a 400.
    throw asAppError(e, "bad_request", "The multipart body could not be read");
  }
  const files = parts.filter((p) => p.name === "file");
  if (files.length === 0) throw new AppError("invalid_field", "file: a file is required");
  if (files.length > 1) throw new AppError("invalid_field", "file: upload one file per request");
  const file = files[0];
  if (file.filename === null) {
    throw new AppError("invalid_field", "file: must be a file, not a text field");
  }
  if (file.data.length > maxBytes) throw tooLarge(maxBytes);

  const decoder = new TextDecoder();
  const raw = parts.filter((p) => p.name === "tags").map((p) => decoder.decode(p.data));
  // `invalid_field` like the form's other fields: a plain `{"detail": "tags: ..."}`.
  const tags = forField("tags", "invalid_tag_name", () => parseTagList(raw), "invalid_field");
  return { bytes: file.data, sha256: hash.digest("hex"), tags, ...restoreFields(parts) };
}
