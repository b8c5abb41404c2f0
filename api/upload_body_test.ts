import assert from "node:assert/strict";
import { HttpError } from "./errors.ts";
import { readUploadForm } from "./upload_body.ts";

const MAX = 1_000_000;

/** An upload form's bytes and content type, as a browser would send them. */
async function encodedForm(file: Uint8Array, tags: string) {
  const form = new FormData();
  form.append("tags", tags);
  form.append("file", new File([file as BlobPart], "a.png", { type: "image/png" }));
  const req = new Request("http://x/", { method: "POST", body: form });
  return {
    body: new Uint8Array(await req.arrayBuffer()),
    contentType: req.headers.get("content-type")!,
  };
}

/** A request streaming `body` in 1000-byte chunks, with `contentLength` as its header. */
function streamed(body: Uint8Array, contentType: string, contentLength: number | null) {
  let at = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(c) {
      if (at >= body.length) return c.close();
      c.enqueue(body.slice(at, at += 1000));
    },
  });
  const headers: Record<string, string> = { "content-type": contentType };
  if (contentLength !== null) headers["content-length"] = String(contentLength);
  return new Request("http://x/", { method: "POST", headers, body: stream });
}

const file = new Uint8Array(54_321).map((_, i) => (i * 31) % 256);

Deno.test("readUploadForm() reads a chunked body with and without Content-Length intact", async () => {
  const { body, contentType } = await encodedForm(file, "cat, dog");
  for (const length of [body.length, null]) {
    const form = await readUploadForm(streamed(body, contentType, length), MAX);
    assert.deepEqual(form.bytes, file, `Content-Length ${length}`);
    assert.deepEqual(form.tags, ["cat", "dog"]);
  }
});

Deno.test("readUploadForm() refuses a body that disagrees with its Content-Length with 400", async () => {
  const { body, contentType } = await encodedForm(file, "cat");
  for (const length of [body.length - 1, body.length + 1]) {
    await assert.rejects(
      readUploadForm(streamed(body, contentType, length), MAX),
      (e) => e instanceof HttpError && e.status === 400,
      `Content-Length ${length} for ${body.length} bytes`,
    );
  }
});
