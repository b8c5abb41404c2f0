/**
 * The probes of a multi-index hashing search (migration 008): the hash is split into four 16-bit
 * blocks; a hash within distance d of the query has some block within r = floor(d / 4) of the
 * query's same block (if every block differed in r + 1 bits or more, the whole would differ in
 * 4r + 4 > d). So a search looks up, in each block's index, every 16-bit value within r of the
 * query's block: 1 + 16 + 120 = 137 values per block at r = 2, then checks the full distance.
 */

/** Blocks the hash is split into; each is BLOCK_BITS wide. */
export const BLOCKS = 4;
/** Bits per block. */
export const BLOCK_BITS = 16;
/** The largest distance a search accepts (the API's cap). */
export const MAX_DISTANCE = 16;

/** The unsigned value of block `i` (0 = most significant) of a signed 64-bit hash. */
export function blockOf(hash: bigint, i: number): number {
  const shift = BigInt((BLOCKS - 1 - i) * BLOCK_BITS);
  return Number((BigInt.asUintN(64, hash) >> shift) & 0xffffn);
}

/** Every 16-bit value within Hamming distance `radius` of `value`, `value` first. */
export function valuesWithin(value: number, radius: number): number[] {
  const out = [value];
  const flip = (from: number, base: number, left: number) => {
    for (let bit = from; bit < BLOCK_BITS; bit++) {
      const next = base ^ (1 << bit);
      out.push(next);
      if (left > 1) flip(bit + 1, next, left - 1);
    }
  };
  if (radius > 0) flip(0, value, radius);
  return out;
}

/** For each block, the values to look up so that every hash within `distance` is found. */
export function blockProbes(hash: bigint, distance: number): number[][] {
  if (!Number.isInteger(distance) || distance < 0 || distance > MAX_DISTANCE) {
    throw new RangeError(`distance must be an integer from 0 to ${MAX_DISTANCE}`);
  }
  const radius = Math.floor(distance / BLOCKS);
  return Array.from({ length: BLOCKS }, (_, i) => valuesWithin(blockOf(hash, i), radius));
}
