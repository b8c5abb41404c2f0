/** The postgres.js client, and how its failures are told apart. */
import postgres from "postgres";
import { isDatabaseUnavailable, isRetryableTransactionError } from "../domain/errors.ts";
import { SIMILARITY_THRESHOLD } from "../domain/caption_text.ts";

/** A postgres.js connection pool. */
export type Sql = postgres.Sql;

/** A piece of SQL written with postgres.js's tagged template, for composing statements. */
export type Fragment = postgres.PendingQuery<postgres.Row[]>;

/**
 * Reconnect delay in seconds after `retries` consecutive connection errors. The driver's
 * default grows as 3^n/100 up to 20 s with a counter shared by the pool, so after a failover
 * that killed every connection the first requests waited many seconds; this caps at half a
 * second.
 */
export function reconnectBackoff(retries: number): number {
  return Math.min(0.02 * 2 ** retries, 0.5) * (0.5 + Math.random() / 2);
}

/**
 * The bounds of the service's pool. A request that needs the database answers within about five
 * seconds whatever the database does: a new connection gets CONNECT_TIMEOUT_S, a query waits at
 * most QUEUE_TIMEOUT_S for a connection (postgres.js patched, vendor/postgres/PATCHED.md) and
 * runs at most STATEMENT_TIMEOUT_MS on the server. Every query the service runs per request takes
 * milliseconds (bench B5), so these only cut what is already an outage.
 */
export const CONNECT_TIMEOUT_S = 3;
/** See CONNECT_TIMEOUT_S. */
export const QUEUE_TIMEOUT_S = 4;
/** See CONNECT_TIMEOUT_S. */
export const STATEMENT_TIMEOUT_MS = 4000;

/** Options of `createSql`. */
export interface SqlOptions {
  /** Most connections (default 10). */
  max?: number;
  /**
   * The service's bounds on every wait (default true). False for operator work that may run long
   * on purpose (seeding, test set-up): no statement timeout, no queue deadline.
   */
  bounded?: boolean;
  /**
   * Every statement on these connections runs with PostgreSQL's generic plan, planned once per
   * connection (see withGenericPlan). For a pool of its own, never the service's main one.
   */
  genericPlans?: boolean;
  /** More server settings for these connections (name: value). */
  settings?: Record<string, string>;
}

/** Opens a pool on `url` (postgres:// or postgresql://). Connections are lazy. */
export function createSql(url: string, opts: SqlOptions = {}): Sql {
  const bounded = opts.bounded ?? true;
  return postgres(url, {
    max: opts.max ?? 10,
    idle_timeout: 30,
    connect_timeout: bounded ? CONNECT_TIMEOUT_S : 10,
    queue_timeout: bounded ? QUEUE_TIMEOUT_S : null,
    backoff: reconnectBackoff,
    onnotice: () => {},
    connection: {
      application_name: "reaction-board",
      // JIT compiles a plan whose estimate passes jit_above_cost: 200 ms of compiling for a page
      // that takes 2 ms, as in the generic plan of the newest page (bench/plans/newest.txt).
      // No query here reads enough rows to gain from it.
      jit: "off",
      ...(opts.genericPlans ? { plan_cache_mode: "force_generic_plan" } : {}),
      ...opts.settings,
      ...(bounded
        ? {
          statement_timeout: STATEMENT_TIMEOUT_MS,
          // A transaction left open by a client that vanished must not hold its locks for long.
          idle_in_transaction_session_timeout: 15_000,
        }
        : {}),
    },
  });
}

/**
 * The search pool's own server settings (createSearchSql). The caption search's `%` then reads only
 * the dictionary words it keeps from the trigram index, not every word past pg_trgm's default 0.3
 * (B10: more searches a second; figures in bench/RESULTS.md#notes-moved-from-code-comments).
 */
export const SEARCH_SETTINGS = { "pg_trgm.similarity_threshold": String(SIMILARITY_THRESHOLD) };

/**
 * The pool of the autocomplete and the caption search (Services.searchSql): generic plans, at most
 * `connections` at once (SEARCH_CONNECTIONS, adapters/config.ts).
 */
export function createSearchSql(url: string, connections: number): Sql {
  return createSql(url, { max: connections, genericPlans: true, settings: SEARCH_SETTINGS });
}

/** Which failures mean the database could not be used, or a write lost a race: domain/errors.ts. */
export { isDatabaseUnavailable, isRetryableTransactionError } from "../domain/errors.ts";

/**
 * The database's current snapshot as text: equal values mean that nothing was written in between
 * (adapters/http/snapshot_cache.ts). Any write anywhere on the server changes it.
 */
export async function databaseSnapshot(sql: Sql): Promise<string> {
  const [row] = await sql<{ snapshot: string }[]>`select pg_current_snapshot()::text as snapshot`;
  return row.snapshot;
}

/**
 * Rows of `query`, run with PostgreSQL's generic plan: planned once per connection, not for each
 * call's parameters. For statements whose plan shape the text fixes (materialised steps, one-time
 * conditions), where planning each call for its own values costs more than running it.
 *
 * On a pool opened with `genericPlans` the query runs as it is; on any other, in a transaction
 * that sets the plan mode, which costs three more round trips: measured on the autocomplete at
 * concurrency 8, 3,300-4,700 calls a second that way against 6,800-9,800 on such a pool.
 */
export async function withGenericPlan<T extends readonly postgres.Row[]>(
  sql: Sql,
  query: (sql: Sql | postgres.TransactionSql) => postgres.PendingQuery<T>,
): Promise<T> {
  if (sql.options.connection.plan_cache_mode === "force_generic_plan") return await query(sql);
  const [, rows] = await sql.begin((tx) => [
    tx`set local plan_cache_mode = force_generic_plan`,
    query(tx),
  ]);
  return rows as unknown as T;
}

/**
 * Runs a read, once more if its connection turned out to be dead (a pool connection the server
 * terminated while idle fails its next query; the retry takes a fresh one). Only a failure that
 * came quickly is retried, so that a read still answers within the pool's bounds. Reads only: a
 * write whose connection died may have committed.
 */
export async function retryRead<T>(fn: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    return await fn();
  } catch (e) {
    if (!isDatabaseUnavailable(e) || performance.now() - started > RETRY_WITHIN_MS) throw e;
    // Give the dying connection a moment to close, so the retry gets a fresh one rather than
    // being written to a socket on its way out (which postgres.js may never answer).
    await new Promise((r) => setTimeout(r, 100));
    return await fn();
  }
}

/** A read that failed after longer than this is not tried again (see retryRead). */
const RETRY_WITHIN_MS = 1000;

/** Runs `fn` in a transaction, retrying a few times when it deadlocks or fails to serialize. */
export async function transaction<T>(sql: Sql, fn: (tx: postgres.TransactionSql) => Promise<T>) {
  for (let attempt = 1;; attempt++) {
    try {
      return await sql.begin(fn) as T;
    } catch (e) {
      if (attempt >= 5 || !isRetryableTransactionError(e)) throw e;
      await new Promise((r) => setTimeout(r, 5 * attempt + Math.random() * 20));
    }
  }
}
