/**
 * A seeded pseudo-random generator, so that generated data and failures reproduce.
 *
 * @module
 */

/** A deterministic stream of numbers in [0, 1) from `seed` (mulberry32). */
export function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
