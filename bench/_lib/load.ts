/**
 * The load generator of the benchmarks (N loops, each awaiting its previous request, bounded by
 * count and time) and a timing loop.
 *
 * @module
 */
import { percentile } from "./stats.ts";

/** What a load run measured. */
export interface LoadResult {
  requests: number;
  errors: number;
  elapsedMs: number;
  rps: number;
  p50: number;
  p99: number;
  max: number;
  latencies: number[];
  firstError?: string;
}

/** Options of `load()`: N loops, each bounded by count and time. */
export interface LoadOptions {
  concurrency: number;
  /** Stop starting requests after this long. */
  durationMs: number;
  /** Stop after this many requests in all (default: unbounded within the duration). */
  maxRequests?: number;
  /** Requests not timed (per loop) before measuring starts. */
  warmup?: number;
  /** Stop early when this resolves (e.g. the background work being measured is over). */
  until?: Promise<unknown>;
}

/**
 * Runs `concurrency` loops of `request(i)`, each awaiting the previous one; a request counts as
 * an error when it throws or `ok(res)` is false. Bodies are consumed fully.
 */
export async function load(
  opts: LoadOptions,
  request: (i: number) => Promise<Response>,
  ok: (res: Response) => boolean = (res) => res.ok,
): Promise<LoadResult> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let next = 0;
  let stop = false;
  opts.until?.then(() => (stop = true), () => (stop = true));
  const one = async (i: number) => {
    const t0 = performance.now();
    try {
      const res = await request(i);
      await res.arrayBuffer();
      if (!ok(res)) {
        errors++;
        firstError ??= `HTTP ${res.status}`;
      }
    } catch (e) {
      errors++;
      firstError ??= String(e);
    }
    return performance.now() - t0;
  };
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      for (let w = 0; w < (opts.warmup ?? 0); w++) await one(-1);
    }),
  );
  const started = performance.now();
  const deadline = started + opts.durationMs;
  const max = opts.maxRequests ?? Infinity;
  await Promise.all(
    Array.from({ length: opts.concurrency }, async () => {
      while (!stop && performance.now() < deadline && next < max) {
        latencies.push(await one(next++));
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  return {
    requests: latencies.length,
    errors,
    elapsedMs,
    rps: latencies.length / (elapsedMs / 1000),
    p50: percentile(latencies, 50),
    p99: percentile(latencies, 99),
    max: Math.max(...latencies),
    latencies,
    firstError,
  };
}

/** Times `fn` `n` times (bounded by `maxMs`, at least once); returns every duration in ms. */
export async function timeRuns(
  n: number,
  maxMs: number,
  fn: (i: number) => Promise<unknown>,
): Promise<number[]> {
  const out: number[] = [];
  const deadline = performance.now() + maxMs;
  for (let i = 0; i < n && (i === 0 || performance.now() < deadline); i++) {
    const t0 = performance.now();
    await fn(i);
    out.push(performance.now() - t0);
  }
  return out;
}

/** One line of what a load did: requests, rate and the first error, for a row's metric. */
export const loadLine = (r: LoadResult) =>
  `${r.requests} req, ${r.rps.toFixed(0)} req/s${
    r.errors ? `, ${r.errors} errors: ${r.firstError}` : ""
  }`;
