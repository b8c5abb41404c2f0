/** A raw HTTP/1.1 request on a socket of its own, for what fetch() will not send. */
import { concat, te } from "./bytes.ts";

/** Sends a raw HTTP/1.1 request on a fresh connection; `then` runs after the write. */
export async function rawHttp(
  port: number,
  head: string,
  body: Uint8Array,
  opts: { closeWrite?: boolean; timeoutMs: number },
): Promise<{ status: number | null; text: string; timedOut: boolean }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      conn.close();
    } catch { /* closed already */ }
  }, opts.timeoutMs);
  const chunks: Uint8Array[] = [];
  try {
    await conn.write(concat(te(head), body));
    if (opts.closeWrite) await conn.closeWrite();
    const buf = new Uint8Array(16 * 1024);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
      const sofar = new TextDecoder().decode(concat(...chunks));
      // Enough to judge once the head and a JSON body are in.
      if (/\r\n\r\n[\s\S]*\}\s*$/.test(sofar)) break;
    }
  } catch {
    // reset or closed by the timer
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed already */ }
  }
  const text = new TextDecoder().decode(concat(...chunks));
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  return { status: m ? Number(m[1]) : null, text, timedOut };
}
