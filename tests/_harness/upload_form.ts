/**
 * Upload forms encoded by hand, for the benchmarks' uploaders and the tests that drive them.
 *
 * @module
 */

/**
 * An upload form encoded by hand into one buffer (one copy of the file), so the client spends
 * as little as possible on it: what a browser sends for `<input type=file>` plus tags.
 */
export interface UploadForm {
  body: Uint8Array<ArrayBuffer>;
  contentType: string;
}

/** `bytes` as the form's file `upload.jpg` (image/jpeg), after one `tags` field per tag. */
export function multipartBody(bytes: Uint8Array, tags: string[] = []): UploadForm {
  const hex = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12);
  const boundary = `----bench${hex()}${hex()}`;
  const enc = new TextEncoder();
  const head = enc.encode(
    tags.map((t) => `--${boundary}\r\nContent-Disposition: form-data; name="tags"\r\n\r\n${t}\r\n`)
      .join("") +
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="upload.jpg"\r\n` +
      `Content-Type: image/jpeg\r\n\r\n`,
  );
  const tail = enc.encode(`\r\n--${boundary}--\r\n`);
  const body = new Uint8Array(head.length + bytes.length + tail.length);
  body.set(head, 0);
  body.set(bytes, head.length);
  body.set(tail, head.length + bytes.length);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}
