/**
 * Uploads to the service under benchmark: through fetch, or written to a socket of their own as a
 * browser or wrk would send them.
 *
 * @module
 */
import { multipartBody, type UploadForm } from "../../tests/_harness/upload_form.ts";

/** POSTs one upload (a file, or a form built beforehand); resolves with the response (body not read). */
export function upload(
  base: string,
  auth: Record<string, string>,
  file: Uint8Array | UploadForm,
  tags: string[] = [],
): Promise<Response> {
  const { body, contentType } = file instanceof Uint8Array ? multipartBody(file, tags) : file;
  return fetch(`${base}/api/v1/images`, {
    method: "POST",
    headers: { ...auth, "content-type": contentType },
    body,
  });
}

/**
 * POSTs `form` over a plain socket (HTTP/1.1, `connection: close`) and reads the whole response;
 * resolves with the status. Deno's fetch spends about 6 ms on a 5.3 MB body before the service
 * sees the request, a socket write 0.2 ms: this is how wrk or a browser would send it.
 */
export async function socketUpload(
  base: string,
  auth: Record<string, string>,
  form: UploadForm,
): Promise<number> {
  const url = new URL(base);
  const conn = await Deno.connect({ hostname: url.hostname, port: Number(url.port) });
  const head = [
    "POST /api/v1/images HTTP/1.1",
    `host: ${url.host}`,
    `content-type: ${form.contentType}`,
    `content-length: ${form.body.length}`,
    ...Object.entries(auth).map(([k, v]) => `${k}: ${v}`),
    "connection: close",
    "",
    "",
  ].join("\r\n");
  for (const bytes of [new TextEncoder().encode(head), form.body]) {
    for (let at = 0; at < bytes.length;) at += await conn.write(bytes.subarray(at));
  }
  // Read to the end of the stream, which closes the connection.
  const response = new TextDecoder().decode(await new Response(conn.readable).arrayBuffer());
  return Number(response.slice(9, 12));
}

/** An upload that must create a new image (201); returns its short ID. */
export async function uploadNew(
  base: string,
  auth: Record<string, string>,
  file: Uint8Array | UploadForm,
  tags: string[] = [],
): Promise<string> {
  const res = await upload(base, auth, file, tags);
  const body = await res.json();
  if (res.status !== 201) throw new Error(`upload: ${res.status} ${JSON.stringify(body)}`);
  return body.short_id;
}
