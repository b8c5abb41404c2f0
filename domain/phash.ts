/**
 * 64-bit perceptual hashes of an image's pixels, as signed 64-bit integers (how PostgreSQL's
 * `bigint` stores them). Two hashes are compared by their Hamming distance: the number of bits
 * that differ.
 *
 * `gradientHash` (dHash) is the one stored; `dctHash` (the DCT pHash) is kept for the corpus
 * bench that chose between them (bench/b11_similar_quality.ts, figures in bench/RESULTS.md).
 *
 * Both take greyscale pixels already shrunk by libvips (`HASH_INPUT`), so the arithmetic here
 * is a few thousand multiplications: well under a millisecond.
 */

/** Side of the greyscale square the DCT hash is computed from. */
export const DCT_SIDE = 32;
/** Low frequencies kept per axis: 8 x 8 = 64 bits. */
const KEEP = 8;

/** cos((2x + 1) u pi / 2N) for u < KEEP, x < N: the DCT-II basis, computed once. */
const COS = (() => {
  const table = new Float64Array(KEEP * DCT_SIDE);
  for (let u = 0; u < KEEP; u++) {
    for (let x = 0; x < DCT_SIDE; x++) {
      table[u * DCT_SIDE + x] = Math.cos(((2 * x + 1) * u * Math.PI) / (2 * DCT_SIDE));
    }
  }
  return table;
})();

/** Packs 64 booleans (most significant first) into a signed 64-bit integer. */
function pack(bits: (i: number) => boolean): bigint {
  let value = 0n;
  for (let i = 0; i < 64; i++) value = (value << 1n) | (bits(i) ? 1n : 0n);
  return BigInt.asIntN(64, value);
}

/**
 * The DCT pHash of a 32 x 32 greyscale image (row-major, one byte per pixel): the 8 x 8 lowest
 * frequencies of its 2-D DCT, each bit set when the coefficient is above their median (the DC
 * term, the mean brightness, is left out of the median, so brightness changes cancel).
 */
export function dctHash(grey: Uint8Array): bigint {
  if (grey.length !== DCT_SIDE * DCT_SIDE) throw new Error("dctHash needs 32x32 grey pixels");
  const N = DCT_SIDE;
  // Rows first: rows[y][u] = sum_x grey[y][x] cos(u, x).
  const rows = new Float64Array(N * KEEP);
  for (let y = 0; y < N; y++) {
    for (let u = 0; u < KEEP; u++) {
      let sum = 0;
      for (let x = 0; x < N; x++) sum += grey[y * N + x] * COS[u * N + x];
      rows[y * KEEP + u] = sum;
    }
  }
  // Then columns: coef[v][u] = sum_y rows[y][u] cos(v, y).
  const coef = new Float64Array(KEEP * KEEP);
  for (let v = 0; v < KEEP; v++) {
    for (let u = 0; u < KEEP; u++) {
      let sum = 0;
      for (let y = 0; y < N; y++) sum += rows[y * KEEP + u] * COS[v * N + y];
      coef[v * KEEP + u] = sum;
    }
  }
  const ac = [...coef.subarray(1)].sort((a, b) => a - b);
  const median = (ac[31] + ac[32]) / 2;
  return pack((i) => coef[i] > median);
}

/** Side lengths of the greyscale image the gradient hash is computed from (9 wide, 8 high). */
export const GRADIENT_SIZE = { width: 9, height: 8 } as const;

/** The dHash of a 9 x 8 greyscale image: each bit says whether a pixel is brighter than its right neighbour. */
export function gradientHash(grey: Uint8Array): bigint {
  if (grey.length !== 72) throw new Error("gradientHash needs 9x8 grey pixels");
  return pack((i) => {
    const y = Math.floor(i / 8), x = i % 8;
    return grey[y * 9 + x] > grey[y * 9 + x + 1];
  });
}

/** The number of bits in which two hashes differ. */
export function hammingDistance(a: bigint, b: bigint): number {
  let x = BigInt.asUintN(64, a ^ b);
  let count = 0;
  while (x) {
    x &= x - 1n;
    count++;
  }
  return count;
}
