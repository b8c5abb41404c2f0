/**
 * A small multipart/form-data parser for uploads, incremental: the body is read into one buffer
 * (the caller caps its size) and parsed after each read, the boundaries found by `indexOfBytes`,
 * where node:buffer's indexOf (JavaScript under Deno) and the platform's formData() each held the
 * event loop for a whole body at once (bench/RESULTS.md#notes-moved-from-code-comments). The file's
 * bytes are a view into the body: no copy.
 */

/** One part of the form. */
export interface FormPart {
  name: string;
  filename: string | null;
  contentType: string | null;
  data: Uint8Array;
}

/** The body is not well-formed multipart. */
export class MultipartError extends Error {
  override name = "MultipartError";
}

const encoder = new TextEncoder();
const CRLF = encoder.encode("\r\n");
const HEADER_END = encoder.encode("\r\n\r\n");
const MAX_PARTS = 200;
const MAX_HEADER_BYTES = 8 * 1024;

/** The boundary of a `multipart/form-data; boundary=...` content type, or null. */
export function multipartBoundary(contentType: string | null | undefined): string | null {
  if (!contentType || !/^multipart\/form-data\s*;/i.test(contentType)) return null;
  const m = /;\s*boundary=(?:"([^"]{1,70})"|([^\s;"]{1,70}))/i.exec(contentType);
  return m ? (m[1] ?? m[2]) : null;
}

function param(header: string, key: string): string | null {
  const m = new RegExp(`;\\s*${key}="((?:[^"\\\\]|\\\\.)*)"|;\\s*${key}=([^;\\s]+)`, "i").exec(
    header,
  );
  if (!m) return null;
  return m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : m[2];
}

/**
 * The first index of `needle` in `hay` at or after `from`, or -1. A boundary line (16 bytes or
 * more) is found by Horspool's method: each step reads the byte under the needle's last position
 * and skips as far as that byte allows, several times faster on random bytes than jumping between
 * candidate first bytes with the native indexOf (bench/RESULTS.md#notes-moved-from-code-comments).
 * Shorter needles, whose skips are short, keep the native first-byte jumps.
 */
export function indexOfBytes(hay: Uint8Array, needle: Uint8Array, from = 0): number {
  const last = needle.length - 1;
  if (last >= 15) return horspool(hay, needle, from);
  const first = needle[0];
  for (let i = hay.indexOf(first, from); i !== -1; i = hay.indexOf(first, i + 1)) {
    if (i + last >= hay.length) return -1;
    let j = 1;
    while (j <= last && hay[i + j] === needle[j]) j++;
    if (j > last) return i;
  }
  return -1;
}

function horspool(hay: Uint8Array, needle: Uint8Array, from: number): number {
  const last = needle.length - 1;
  // How far the window may move when this byte is under its last position (at most 255,
  // enough for the longest boundary RFC 2046 allows, 70 characters, and its prefix).
  const skip = new Uint8Array(256).fill(Math.min(last + 1, 255));
  for (let i = 0; i < last; i++) skip[needle[i]] = Math.min(last - i, 255);
  const lastByte = needle[last];
  for (let i = Math.max(from, 0); i + last < hay.length; i += skip[hay[i + last]]) {
    if (hay[i + last] !== lastByte) continue;
    let j = 0;
    while (j < last && hay[i + j] === needle[j]) j++;
    if (j === last) return i;
  }
  return -1;
}

/** Given each stretch of part number `index` (named `name`) as it becomes known. */
export type OnPartData = (data: Uint8Array, index: number, name: string) => void;

/** Where a part's bytes are, as offsets into the body (a growing body moves its buffer). */
interface PartAt {
  name: string;
  filename: string | null;
  contentType: string | null;
  start: number;
  /** -1 until the delimiter after the part has arrived. */
  end: number;
}

/**
 * An incremental multipart/form-data parser over a body that arrives in order into one buffer:
 * after each read, `advance(body, length)` parses as far as the bytes so far allow, resuming
 * where it stopped, so no step ever scans the whole body again (a 12 MP upload was one 6 ms
 * parse after its last byte; now each 64 KB read costs microseconds). `onData` is given each
 * stretch of a part's bytes as soon as it is known not to be the start of a delimiter, so a
 * caller can hash a file while it streams in.
 */
export class MultipartParser {
  readonly #delimiter: Uint8Array;
  readonly #next: Uint8Array;
  readonly #onData?: OnPartData;
  readonly #parts: PartAt[] = [];
  readonly #decoder = new TextDecoder();
  #state: "preamble" | "delimiter" | "headers" | "data" | "done" = "preamble";
  /** Where the current state's bytes start. */
  #at = 0;
  /** In "data": the first byte not yet handed to `onData` (no delimiter starts before it). */
  #scanned = 0;

  constructor(boundary: string, onData?: OnPartData) {
    this.#delimiter = encoder.encode(`--${boundary}`);
    this.#next = encoder.encode(`\r\n--${boundary}`);
    this.#onData = onData;
  }

  /** True once the closing delimiter has been read. */
  get done(): boolean {
    return this.#state === "done";
  }

  /** Parses `body[0..length)` as far as it goes; throws MultipartError on a malformed body. */
  advance(body: Uint8Array, length: number): void {
    const buf = body.subarray(0, length);
    for (;;) {
      switch (this.#state) {
        case "preamble": {
          const at = indexOfBytes(buf, this.#delimiter, this.#at);
          if (at < 0) {
            // The delimiter may start in the last bytes read: look there again next time.
            this.#at = Math.max(0, length - this.#delimiter.length + 1);
            return;
          }
          this.#at = at + this.#delimiter.length;
          this.#state = "delimiter";
          break;
        }
        case "delimiter": {
          const at = this.#at;
          if (length < at + 2) return;
          if (buf[at] === 0x2d && buf[at + 1] === 0x2d) { // closing "--"
            this.#state = "done";
            return;
          }
          if (buf[at] !== CRLF[0] || buf[at + 1] !== CRLF[1]) {
            throw new MultipartError("bad boundary line");
          }
          this.#at = at + 2;
          this.#state = "headers";
          break;
        }
        case "headers": {
          const start = this.#at;
          const end = indexOfBytes(buf, HEADER_END, start);
          if (end < 0 ? length - start > MAX_HEADER_BYTES + 3 : end - start > MAX_HEADER_BYTES) {
            throw new MultipartError("bad part headers");
          }
          if (end < 0) return;
          this.#parts.push(this.#partHeaders(buf.subarray(start, end), end + 4));
          if (this.#parts.length > MAX_PARTS) throw new MultipartError("too many parts");
          this.#at = this.#scanned = end + 4;
          this.#state = "data";
          break;
        }
        case "data": {
          const part = this.#parts.length - 1;
          // No delimiter starts before #scanned: that was checked when those bytes were handed on.
          const end = indexOfBytes(buf, this.#next, this.#scanned);
          // Without a delimiter, every byte before the last (delimiter length - 1) is data.
          const known = end < 0 ? Math.max(this.#scanned, length - this.#next.length + 1) : end;
          if (known > this.#scanned) {
            this.#onData?.(buf.subarray(this.#scanned, known), part, this.#parts[part].name);
          }
          this.#scanned = known;
          if (end < 0) return;
          this.#parts[part].end = end;
          this.#at = end + 2 + this.#delimiter.length;
          this.#state = "delimiter";
          break;
        }
        case "done":
          return;
      }
    }
  }

  /** The parts, as views into `body` (the whole body, as read); throws unless it was complete. */
  finish(body: Uint8Array): FormPart[] {
    if (this.#state !== "done") {
      throw new MultipartError(
        this.#state === "preamble" ? "no boundary found" : "unterminated part",
      );
    }
    return this.#parts.map(({ start, end, ...p }) => ({ ...p, data: body.subarray(start, end) }));
  }

  #partHeaders(head: Uint8Array, start: number): PartAt {
    let disposition = "", contentType: string | null = null;
    for (const line of this.#decoder.decode(head).split("\r\n")) {
      const colon = line.indexOf(":");
      const key = line.slice(0, colon).trim().toLowerCase();
      if (key === "content-disposition") disposition = line.slice(colon + 1);
      else if (key === "content-type") contentType = line.slice(colon + 1).trim();
    }
    const name = param(disposition, "name");
    if (!/^\s*form-data\s*;/i.test(disposition) || name === null) {
      throw new MultipartError("a part has no form-data name");
    }
    return { name, filename: param(disposition, "filename"), contentType, start, end: -1 };
  }
}

/** Splits a whole `body` into its parts; throws MultipartError when it is not well-formed. */
export function parseMultipart(body: Uint8Array, boundary: string): FormPart[] {
  const parser = new MultipartParser(boundary);
  parser.advance(body, body.length);
  return parser.finish(body);
}
