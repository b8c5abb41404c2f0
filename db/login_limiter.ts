/**
 * The login limiter's state in PostgreSQL (table `login_failures`, one row per client address),
 * shared by every replica. Each change is ONE `insert ... on conflict (ip) do update ...
 * returning` statement: the row lock it takes serialises concurrent attempts from one address,
 * so no failure is lost and exactly the LOGIN_MAX_FAILURES-th failure locks. Times come from the
 * database's `now()`, so replicas agree whatever their clocks say.
 *
 * States (SPEC, "Login failure counter"): counting (`locked_until` null or past) and locked
 * (`locked_until > now()`). A failure after the window or after a lock starts again at 1.
 */
import type { Sql } from "./client.ts";

/** The limiter settings, in seconds. */
export interface LoginLimits {
  maxFailures: number;
  windowSeconds: number;
  cooldownSeconds: number;
}

/** The limiter's variables of a service configuration (adapters/config.ts parses them). */
export interface LoginLimitSettings {
  LOGIN_MAX_FAILURES: number;
  LOGIN_WINDOW_SECONDS: number;
  LOGIN_COOLDOWN_SECONDS: number;
}

/** The limits of a service configuration. */
export function loginLimits(config: LoginLimitSettings): LoginLimits {
  return {
    maxFailures: config.LOGIN_MAX_FAILURES,
    windowSeconds: config.LOGIN_WINDOW_SECONDS,
    cooldownSeconds: config.LOGIN_COOLDOWN_SECONDS,
  };
}

/** The state of an address after a failure was recorded. */
export interface FailureOutcome {
  /** Consecutive failures in the current window (unchanged while locked). */
  failures: number;
  /** True when the address is locked now (this failure locked it, or it already was). */
  locked: boolean;
}

const CLEANUP_INTERVAL_MS = 60_000;

/** The login limiter of one service instance; its state is in the database. */
export class LoginLimiter {
  #nextCleanup = 0;

  constructor(
    private readonly sql: Sql,
    private readonly limits: LoginLimits,
    private readonly clock: () => number = Date.now,
  ) {}

  /** True when `ip` is locked now (a primary-key lookup; checked before the credentials). */
  async isLocked(ip: string): Promise<boolean> {
    const rows = await this.sql`
      select 1 from login_failures where ip = ${ip} and locked_until > now()`;
    return rows.length > 0;
  }

  /** Counts a failed login of `ip`, locking it on the LOGIN_MAX_FAILURES-th in the window. */
  async recordFailure(ip: string): Promise<FailureOutcome> {
    const { maxFailures, windowSeconds, cooldownSeconds } = this.limits;
    const sql = this.sql;
    const window = sql`make_interval(secs => ${windowSeconds})`;
    const lockedNow = sql`f.locked_until > now()`;
    // A lock that has ended, or a window that has passed: this failure is the first of a new one.
    const startsAnew =
      sql`(f.locked_until is not null or f.window_started_at <= now() - ${window})`;
    const count = sql`case when ${startsAnew} then 1 else f.failures + 1 end`;
    const lockUntil = sql`now() + make_interval(secs => ${cooldownSeconds})`;
    const [row] = await sql<{ failures: number; locked: boolean }[]>`
      insert into login_failures as f (ip, failures, window_started_at, locked_until)
      values (${ip}, 1, now(), case when 1 >= ${maxFailures} then ${lockUntil} end)
      on conflict (ip) do update set
        failures = case when ${lockedNow} then f.failures else ${count} end,
        window_started_at = case
          when ${lockedNow} then f.window_started_at
          when ${startsAnew} then now()
          else f.window_started_at end,
        locked_until = case
          when ${lockedNow} then f.locked_until
          when ${count} >= ${maxFailures} then ${lockUntil} end
      returning failures, coalesce(locked_until > now(), false) as locked`;
    await this.#maybeCleanup();
    return row;
  }

  /**
   * Resets the count of `ip` after a successful login, unless a concurrent failure has locked
   * it in the meantime; returns whether it is locked (then no token must be issued).
   */
  async recordSuccess(ip: string): Promise<{ locked: boolean }> {
    const lockedNow = this.sql`f.locked_until > now()`;
    const [row] = await this.sql<{ locked: boolean }[]>`
      insert into login_failures as f (ip, failures, window_started_at, locked_until)
      values (${ip}, 0, now(), null)
      on conflict (ip) do update set
        failures = case when ${lockedNow} then f.failures else 0 end,
        window_started_at = case when ${lockedNow} then f.window_started_at else now() end,
        locked_until = case when ${lockedNow} then f.locked_until end
      returning coalesce(locked_until > now(), false) as locked`;
    await this.#maybeCleanup();
    return row;
  }

  /**
   * Deletes rows that no longer matter: window over and not locked. Backed by the index on
   * `window_started_at`; returns the number of rows deleted.
   */
  async deleteStale(): Promise<number> {
    const result = await this.sql`
      delete from login_failures
      where window_started_at <= now() - make_interval(secs => ${this.limits.windowSeconds})
        and (locked_until is null or locked_until <= now())`;
    return result.count;
  }

  /** At most once a minute per instance; a failure here must not fail the login. */
  async #maybeCleanup(): Promise<void> {
    const now = this.clock();
    if (now < this.#nextCleanup) return;
    this.#nextCleanup = now + CLEANUP_INTERVAL_MS;
    await this.deleteStale().catch(() => {});
  }
}
