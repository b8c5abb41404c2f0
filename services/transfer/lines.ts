/**
 * Text files read line by line in either direction, a block at a time, so that a manifest of
 * any length is never held whole.
 */

const BLOCK = 64 * 1024;

/** The non-empty lines of a file, first to last. */
export async function* readLines(path: string): AsyncGenerator<string> {
  const file = await Deno.open(path);
  try {
    const decoder = new TextDecoder();
    let partial = "";
    for await (const chunk of file.readable) {
      const lines = (partial + decoder.decode(chunk, { stream: true })).split("\n");
      partial = lines.pop()!;
      for (const line of lines) if (line.trim()) yield line;
    }
    partial += decoder.decode();
    if (partial.trim()) yield partial;
  } finally {
    try {
      file.close();
    } catch { /* the readable closed it */ }
  }
}

/**
 * The non-empty lines of a file, last to first: blocks are read from the end and split at
 * newlines (bytes, so a UTF-8 character across a block boundary stays whole).
 */
export async function* readLinesBackward(path: string): AsyncGenerator<string> {
  const file = await Deno.open(path);
  try {
    const decoder = new TextDecoder();
    let pos = (await file.stat()).size;
    let carry = new Uint8Array(0); // the start of a line whose beginning is in an earlier block
    while (pos > 0) {
      const size = Math.min(BLOCK, pos);
      pos -= size;
      await file.seek(pos, Deno.SeekMode.Start);
      const block = new Uint8Array(size + carry.length);
      let at = 0;
      while (at < size) {
        const n = await file.read(block.subarray(at, size));
        if (n === null) throw new Error(`${path} changed while it was read`);
        at += n;
      }
      block.set(carry, size);
      let end = block.length;
      for (let i = block.length - 1; i >= 0; i--) {
        if (block[i] !== 0x0a) continue;
        const line = decoder.decode(block.subarray(i + 1, end));
        if (line.trim()) yield line;
        end = i;
      }
      carry = block.slice(0, end);
    }
    const first = decoder.decode(carry);
    if (first.trim()) yield first;
  } finally {
    file.close();
  }
}
