import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { HttpError } from "./errors.ts";
import { FORM_OVERHEAD_BYTES, readUploadForm, type UploadForm } from "./upload_body.ts";

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

/**
 * A request streaming `body` in 1000-byte chunks, with `contentLength` as its header: from a byte
 * stream, as Deno.serve's request bodies are (read in place), or from a default stream.
 */
function streamed(
  body: Uint8Array,
  contentType: string,
  contentLength: number | null,
  type: "bytes" | "default",
  chunkBytes = 1000,
) {
  let at = 0;
  const pull = (c: ReadableStreamDefaultController<Uint8Array> | ReadableByteStreamController) => {
    if (at < body.length) return c.enqueue(body.slice(at, at += chunkBytes));
    c.close();
    // A byte source completes a pending read-into-buffer once closed (as Deno's bodies do).
    if ("byobRequest" in c) c.byobRequest?.respond(0);
  };
  const stream = type === "bytes"
    ? new ReadableStream({ type: "bytes", pull })
    : new ReadableStream<Uint8Array>({ pull });
  const headers: Record<string, string> = { "content-type": contentType };
  if (contentLength !== null) headers["content-length"] = String(contentLength);
  return new Request("http://x/", { method: "POST", headers, body: stream });
}

const file = new Uint8Array(54_321).map((_, i) => (i * 31) % 256);

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

const types = ["bytes", "default"] as const;

Deno.test("readUploadForm() reads a chunked body with and without Content-Length intact", async () => {
  const { body, contentType } = await encodedForm(file, "cat, dog");
  for (const type of types) {
    for (const length of [body.length, null]) {
      const form = await readUploadForm(streamed(body, contentType, length, type), MAX);
      assert.deepEqual(form.bytes, file, `${type} stream, Content-Length ${length}`);
      assert.equal(form.sha256, sha256(file));
      assert.deepEqual(form.tags, ["cat", "dog"]);
    }
  }
});

Deno.test("readUploadForm() reads a body that arrives over a real connection intact", async () => {
  const big = new Uint8Array(3_000_000).map((_, i) => (i * 7919) % 251);
  const { body, contentType } = await encodedForm(big, "cat");
  const forms: UploadForm[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    forms.push(await readUploadForm(req, 4_000_000));
    return new Response(null, { status: 204 });
  });
  try {
    const res = await fetch(`http://127.0.0.1:${server.addr.port}/`, {
      method: "POST",
      headers: { "content-type": contentType },
      body,
    });
    assert.equal(res.status, 204);
  } finally {
    await server.shutdown();
  }
  assert.equal(forms.length, 1);
  assert.deepEqual(forms[0].bytes, big);
  assert.equal(forms[0].sha256, sha256(big));
  assert.deepEqual(forms[0].tags, ["cat"]);
});

Deno.test("readUploadForm() refuses a body that disagrees with its Content-Length with 400", async () => {
  const { body, contentType } = await encodedForm(file, "cat");
  // Bytes after a complete form: only the length check can notice them.
  const longer = new Uint8Array([...body, 0x0d, 0x0a]);
  for (const type of types) {
    for (
      const [sent, length] of [[body, body.length - 1], [body, body.length + 1], [
        longer,
        body.length,
      ]] as const
    ) {
      await assert.rejects(
        readUploadForm(streamed(sent, contentType, length, type), MAX),
        (e) => e instanceof HttpError && e.status === 400,
        `${type} stream, Content-Length ${length} for ${sent.length} bytes`,
      );
    }
  }
});

Deno.test("readUploadForm() hashes the file read by read, whatever the chunks' sizes", async () => {
  // Bytes that look like the start of a delimiter, where a chunk may end.
  const tricky = file.slice();
  tricky.set(new TextEncoder().encode("\r\n--\r\n-"), 30_000);
  const { body, contentType } = await encodedForm(tricky, "cat");
  for (const type of types) {
    for (const chunk of [1, 7, 4093, 65_536]) {
      const form = await readUploadForm(streamed(body, contentType, null, type, chunk), MAX);
      assert.deepEqual(form.bytes, tricky, `${type} stream, ${chunk}-byte chunks`);
      assert.equal(form.sha256, sha256(tricky), `${type} stream, ${chunk}-byte chunks`);
    }
  }
});

Deno.test("readUploadForm() refuses a body without Content-Length as soon as it passes the limit", async () => {
  const big = new Uint8Array(400_000);
  const { body, contentType } = await encodedForm(big, "cat");
  const max = 100_000; // the limit is this plus FORM_OVERHEAD_BYTES
  for (const type of types) {
    const req = streamed(body, contentType, null, type, 4096);
    let pulled = 0;
    const counted = new Request(req, {
      body: req.body!.pipeThrough(
        new TransformStream({
          transform(chunk, c) {
            pulled += chunk.length;
            c.enqueue(chunk);
          },
        }),
      ),
    });
    await assert.rejects(
      readUploadForm(counted, max),
      (e) => e instanceof HttpError && e.status === 413,
    );
    assert.ok(pulled < max + FORM_OVERHEAD_BYTES + 3 * 4096, `${type}: read ${pulled} bytes`);
  }
});
