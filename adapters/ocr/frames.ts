/**
 * Length-prefixed frames over a byte stream: how CaptionReader and its OCR process talk over the
 * child's stdin and stdout (engine.ts, ocr_process.ts). A reply starts with a magic number, so
 * that stray output on the child's stdout shows up as a broken engine instead of a wrong text.
 *
 * @module
 */

/** "OCR1": the first four bytes of every reply. */
export const MAGIC = 0x3152434f;

/** Reply status: the text of a recognition, an error message, or the process being ready. */
export const Status = { Ok: 0, Error: 1, Ready: 2 } as const;
/** One of Status. */
export type Status = typeof Status[keyof typeof Status];

/** Reads exact byte counts from a stream, across its chunks. */
export class FrameReader {
  #reader: ReadableStreamDefaultReader<Uint8Array>;
  #chunks: Uint8Array[] = [];
  #buffered = 0;

  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = stream.getReader();
  }

  /** The next `n` bytes, or null when the stream ends first. */
  async read(n: number): Promise<Uint8Array | null> {
    while (this.#buffered < n) {
      const { value, done } = await this.#reader.read();
      if (done) return null;
      this.#chunks.push(value);
      this.#buffered += value.length;
    }
    const all = this.#chunks.length === 1 ? this.#chunks[0] : concat(this.#chunks, this.#buffered);
    this.#chunks = all.length > n ? [all.subarray(n)] : [];
    this.#buffered = all.length - n;
    return all.subarray(0, n);
  }

  /** Stops reading (the stream's other end may be gone). */
  cancel(): Promise<void> {
    return this.#reader.cancel().catch(() => {});
  }
}

function concat(chunks: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** A request: the picture's length, its enclosed-region threshold (0 for none), the picture. */
export function requestHeader(length: number, enclosed: number): Uint8Array {
  const head = new Uint8Array(8);
  const view = new DataView(head.buffer);
  view.setUint32(0, length, true);
  view.setUint32(4, enclosed, true);
  return head;
}

/** A reply: magic, status, body length, then the body (UTF-8). */
export function reply(status: Status, body: string): Uint8Array {
  const text = new TextEncoder().encode(body);
  const out = new Uint8Array(12 + text.length);
  const view = new DataView(out.buffer);
  view.setUint32(0, MAGIC, true);
  view.setUint32(4, status, true);
  view.setUint32(8, text.length, true);
  out.set(text, 12);
  return out;
}

/** The next reply from `reader`; throws on a broken stream, null when it has ended. */
export async function readReply(
  reader: FrameReader,
): Promise<{ status: Status; body: string } | null> {
  const head = await reader.read(12);
  if (!head) return null;
  const view = new DataView(head.buffer, head.byteOffset, 12);
  if (view.getUint32(0, true) !== MAGIC) throw new Error("OCR process wrote something else");
  const body = await reader.read(view.getUint32(8, true));
  if (!body) return null;
  return { status: view.getUint32(4, true) as Status, body: new TextDecoder().decode(body) };
}
