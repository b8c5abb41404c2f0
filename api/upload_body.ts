/**
 * Reads an upload's multipart body with bounded memory: refused up front when Content-Length
 * is over the limit, and cut off while streaming as soon as the bytes read pass it, so no
 * client can make the service buffer more than MAX_UPLOAD_BYTES (plus the form's own framing).
 */
import { HttpError } from "./errors.ts";
import { parseTagList, TagNameError } from "../lib/tag_names.ts";

/** Room for multipart framing and the other fields, on top of the file's own limit. */
export const FORM_OVERHEAD_BYTES = 64 * 1024;

/** What an upload form carries. */
export interface UploadForm {
  bytes: Uint8Array;
  tags: string[];
}

class BodyTooLarge extends Error {}

/** The 413 of DESIGN.md, with the limit at the top level of the body. */
export function tooLarge(maxBytes: number): HttpError {
  return new HttpError(413, {
    code: "upload_too_large",
    detail: `The file is larger than the limit of ${maxBytes} bytes`,
    max_bytes: maxBytes,
  });
}

function limited(body: ReadableStream<Uint8Array>, limit: number): ReadableStream<Uint8Array> {
  let seen = 0;
  return body.pipeThrough(
    new TransformStream({
      transform(chunk, ctl) {
        seen += chunk.length;
        if (seen > limit) ctl.error(new BodyTooLarge());
        else ctl.enqueue(chunk);
      },
    }),
  );
}

/** Parses `req` as an upload form; every refusal is an HttpError with DESIGN.md's status. */
export async function readUploadForm(req: Request, maxBytes: number): Promise<UploadForm> {
  const type = req.headers.get("content-type") ?? "";
  if (!/^multipart\/form-data\s*;.*boundary=/i.test(type)) {
    throw new HttpError(400, "Expected a multipart/form-data body with a `file` field");
  }
  const limit = maxBytes + FORM_OVERHEAD_BYTES;
  const declared = Number(req.headers.get("content-length") ?? NaN);
  if (declared > limit) throw tooLarge(maxBytes);
  if (!req.body) throw new HttpError(422, "file: a file is required");

  let form: FormData;
  try {
    form = await new Response(limited(req.body, limit), { headers: { "content-type": type } })
      .formData();
  } catch (e) {
    if (e instanceof BodyTooLarge || (e as Error)?.cause instanceof BodyTooLarge) {
      throw tooLarge(maxBytes);
    }
    // Deno reports the stream error itself in some versions: look for it in the message chain.
    if (String(e).includes("BodyTooLarge")) throw tooLarge(maxBytes);
    throw new HttpError(400, "The multipart body could not be read", { cause: e });
  }

  const files = form.getAll("file");
  if (files.length === 0) throw new HttpError(422, "file: a file is required");
  if (files.length > 1) throw new HttpError(422, "file: upload one file per request");
  const file = files[0];
  if (!(file instanceof File)) throw new HttpError(422, "file: must be a file, not a text field");
  if (file.size > maxBytes) throw tooLarge(maxBytes);

  let tags: string[];
  try {
    tags = parseTagList(form.getAll("tags").map(String));
  } catch (e) {
    if (e instanceof TagNameError) throw new HttpError(422, `tags: ${e.message}`);
    throw e;
  }
  return { bytes: new Uint8Array(await file.arrayBuffer()), tags };
}
