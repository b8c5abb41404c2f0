/**
 * A per-address request limit kept in this process's memory: at most `limit` requests per key in
 * each window of `windowMs`, counted from the key's first request of the window. For a public
 * route that costs real work (search by image decodes an image); the login lock, which must hold
 * across replicas, is in PostgreSQL instead (db/login_limiter.ts).
 */

/** The answer to one request: allowed, or refused with the seconds until the key's next window. */
export type RateDecision = { allowed: true } | { allowed: false; retryAfterSeconds: number };

/** Options of a `RateLimiter`. */
export interface RateLimiterOptions {
  /** Requests allowed per key and window. */
  limit: number;
  /** The window's length; default one minute. */
  windowMs?: number;
  /** Most keys remembered; default 10000 (about 1 MB). */
  maxKeys?: number;
  /** The clock, in ms (injectable for tests). */
  now?: () => number;
}

/**
 * Fixed windows per key in a bounded map. A key's entry is put back at the end of the map when
 * its window starts, so the map runs oldest window first: expired entries are dropped from the
 * front, and when `maxKeys` keys are all live the oldest is forgotten (that address starts
 * afresh) rather than the map growing: rate_limit_test.ts "never holds more than maxKeys".
 */
export class RateLimiter {
  readonly #limit: number;
  readonly #windowMs: number;
  readonly #maxKeys: number;
  readonly #now: () => number;
  readonly #windows = new Map<string, { start: number; count: number }>();

  constructor(opts: RateLimiterOptions) {
    this.#limit = opts.limit;
    this.#windowMs = opts.windowMs ?? 60_000;
    this.#maxKeys = opts.maxKeys ?? 10_000;
    this.#now = opts.now ?? Date.now;
  }

  /** Counts one request of `key` and says whether it may go ahead. */
  take(key: string): RateDecision {
    const now = this.#now();
    let entry = this.#windows.get(key);
    if (!entry || now - entry.start >= this.#windowMs) {
      this.#windows.delete(key);
      this.#sweep(now);
      entry = { start: now, count: 0 };
      this.#windows.set(key, entry);
    }
    if (entry.count >= this.#limit) {
      const ms = entry.start + this.#windowMs - now;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(ms / 1000)) };
    }
    entry.count++;
    return { allowed: true };
  }

  /** How many keys are remembered. */
  get size(): number {
    return this.#windows.size;
  }

  #sweep(now: number): void {
    for (const [key, entry] of this.#windows) {
      if (now - entry.start < this.#windowMs && this.#windows.size < this.#maxKeys) break;
      this.#windows.delete(key);
    }
  }
}
