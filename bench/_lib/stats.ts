/**
 * Percentiles and deterministic draws for the benchmarks.
 *
 * @module
 */

/** The `p`-th percentile (0-100) of `values` (nearest rank). */
export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** The median of `values`. */
export const median = (values: number[]) => percentile(values, 50);

/** A short random hex string, for distinct names. */
export const randomHex = () => crypto.randomUUID().replaceAll("-", "").slice(0, 12);

/**
 * A rank in 1..n from `u` in [0, 1), drawn like bench/seed.ts draws tags (log-uniform:
 * floor(exp(u * ln(n + 1))), rank r with probability ~ 1/r).
 */
export const zipf = (u: number, n: number) =>
  Math.min(n, Math.max(1, Math.floor(Math.exp(u * Math.log(n + 1)))));
