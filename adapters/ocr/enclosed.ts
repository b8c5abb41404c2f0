/**
 * White caption letters are enclosed by their black outline; a bright sky or wall behind them is
 * not. Thresholding alone keeps both (white text on a white wall reads as nothing), so this keeps
 * only bright regions that are letter-sized and touch no edge of the band. It runs in the OCR
 * thread (ocr_worker.ts), a few ms per band, not on the event loop.
 *
 * @module
 */

/** How a picture asks the OCR thread for this filter: a tesseract.js option it ignores. */
export const ENCLOSED_OPTION = "tessjs_enclosed";

/**
 * A picture of `pixels` (greyscale, `width` x `height`) with the regions of pixels >= `threshold`
 * that touch no edge, are neither specks nor wider than 30% or taller than 90% of the picture,
 * in black (0) on white (255).
 */
export function enclosedBright(
  pixels: Uint8Array,
  width: number,
  height: number,
  threshold: number,
): Uint8Array {
  const n = width * height;
  const label = new Int32Array(n).fill(-1);
  const stack = new Int32Array(n);
  const keep: boolean[] = [];
  const minArea = Math.max(8, Math.round(n * 0.00005));
  for (let start = 0; start < n; start++) {
    if (label[start] !== -1 || pixels[start] < threshold) continue;
    const id = keep.length;
    let top = 0, area = 0, edge = false;
    let minX = width, maxX = 0, minY = height, maxY = 0;
    label[start] = id;
    stack[top++] = start;
    const visit = (q: number) => {
      if (label[q] === -1 && pixels[q] >= threshold) {
        label[q] = id;
        stack[top++] = q;
      }
    };
    while (top) {
      const p = stack[--top];
      const x = p % width, y = (p - x) / width;
      area++;
      if (x < minX) minX = x;
      if (x > maxX) maxX = x;
      if (y < minY) minY = y;
      if (y > maxY) maxY = y;
      if (x === 0 || y === 0 || x === width - 1 || y === height - 1) edge = true;
      if (x > 0) visit(p - 1);
      if (x < width - 1) visit(p + 1);
      if (y > 0) visit(p - width);
      if (y < height - 1) visit(p + width);
    }
    keep.push(
      !edge && area >= minArea && maxX - minX < 0.3 * width && maxY - minY < 0.9 * height,
    );
  }
  const out = new Uint8Array(n).fill(255);
  for (let p = 0; p < n; p++) if (label[p] >= 0 && keep[label[p]]) out[p] = 0;
  return out;
}

/** `enclosedBright` on a binary PGM (P5, 8 bit), as a PGM of the same size. */
export function enclosedPgm(pgm: Uint8Array, threshold: number): Uint8Array {
  const head = new TextDecoder().decode(pgm.subarray(0, 40)).match(/^P5\s+(\d+)\s+(\d+)\s+255\s/);
  if (!head) throw new Error("Not an 8-bit binary PGM");
  const [width, height] = [Number(head[1]), Number(head[2])];
  const out = new Uint8Array(pgm.length);
  out.set(pgm.subarray(0, head[0].length));
  out.set(
    enclosedBright(pgm.subarray(head[0].length), width, height, threshold),
    head[0].length,
  );
  return out;
}
