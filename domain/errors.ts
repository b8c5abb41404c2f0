/**
 * The service's one error vocabulary: `AppError` with a stable `code`, and ERRORS, the one table
 * from a code to its HTTP status, headers and body shape. The API (api/errors.ts) and the pages
 * (routes/_pages.ts) both answer through `problemOf`, so a new error is one row here. Failures of the
 * infrastructure (database, storage, contended writes) are classified here too. Pure: no Deno,
 * Hono or database imports, so the domain, db/ and the islands may import it.
 */

/** How an error's body is shaped (docs/api.md#errors). */
type BodyShape =
  /** `{"detail": message}` */
  | "detail"
  /** `{"code", "detail", ...fields}`: the structured form, members at the top level */
  | "coded"
  /** no body at all */
  | "none";

/** One row of the table: what a client gets for a code. */
export interface ErrorRow {
  status: number;
  body: BodyShape;
  /** Headers of the answer, e.g. `Retry-After`. */
  headers?: Record<string, string>;
  /** A fixed client text: the error's own message goes to the log only (it may name SQL or keys). */
  detail?: string;
  /** Logged at this level, with this message, when the error reaches a client. */
  log?: { level: "warn" | "error"; message: string };
}

const RETRY_SOON = { "Retry-After": "5" };

/** Every code the service answers with, and how (one row per code). */
export const ERRORS = {
  bad_request: { status: 400, body: "detail" },
  unauthorized: { status: 401, body: "detail", headers: { "WWW-Authenticate": "Bearer" } },
  /** A write beyond the caller's role or its key's scopes (api/permissions.ts). */
  forbidden: { status: 403, body: "coded" },
  /** A chat platform's request whose signature or timestamp does not verify (api/chat.ts). */
  bad_signature: { status: 401, body: "coded" },
  not_found: { status: 404, body: "detail" },
  /** Accounts (issue 42, services/accounts.ts). */
  username_taken: { status: 409, body: "coded" },
  invite_used: { status: 410, body: "coded" },
  invite_expired: { status: 410, body: "coded" },
  invalid_username: { status: 422, body: "coded" },
  weak_password: { status: 422, body: "coded" },
  wrong_password: { status: 422, body: "coded" },
  configured_admin: { status: 422, body: "coded" },
  /** Every password-hashing slot stayed taken for the whole wait (services/passwords.ts). */
  sign_in_busy: {
    status: 503,
    body: "coded",
    headers: { "Retry-After": "2" },
    log: { level: "warn", message: "sign-in waited too long for a password-hashing slot" },
  },
  short_id_taken: { status: 409, body: "coded" },
  upload_too_large: { status: 413, body: "coded" },
  body_too_large: { status: 413, body: "coded" },
  unsupported_image: { status: 415, body: "coded" },
  /** A video upload on a board without FFmpeg (adapters/video/): the detail says what to install. */
  video_unsupported: { status: 415, body: "coded" },
  /** A video FFmpeg cannot read, or not within its time limit (services/upload/video.ts). */
  video_unreadable: { status: 422, body: "coded" },
  /** A video longer than MAX_VIDEO_SECONDS (`max_seconds`). */
  video_too_long: { status: 422, body: "coded" },
  /** Every FFmpeg slot stayed taken for a run's whole time limit. */
  video_busy: { status: 503, body: "coded", headers: { "Retry-After": "5" } },
  /** A moving image's MP4 is not made yet (services/video_renditions.ts). */
  rendition_pending: { status: 404, body: "coded" },
  range_not_satisfiable: { status: 416, body: "none" },
  /** A request field that does not parse: the detail names it (`field: why`). */
  invalid_field: { status: 422, body: "detail" },
  invalid_tag_name: { status: 422, body: "coded" },
  too_many_tags: { status: 422, body: "coded" },
  too_many_pixels: { status: 422, body: "coded" },
  caption_text_invalid: { status: 422, body: "detail" },
  bad_cursor: { status: 422, body: "detail" },
  self_merge: { status: 422, body: "coded" },
  alias_chain: { status: 422, body: "coded" },
  alias_self: { status: 422, body: "coded" },
  alias_not_found: { status: 404, body: "coded" },
  implication_cycle: { status: 422, body: "coded" },
  implication_not_found: { status: 404, body: "coded" },
  tag_not_found: { status: 404, body: "coded" },
  name_is_alias: { status: 422, body: "coded" },
  not_implemented: { status: 501, body: "detail" },
  /**
   * A public route's per-address limit (adapters/http/rate_limit.ts); the error carries its
   * `Retry-After` and `retry_after`.
   */
  rate_limited: { status: 429, body: "coded" },
  /** Admission control refused an upload (api/upload_gate.ts). */
  busy: { status: 503, body: "coded", headers: { "Retry-After": "2" } },
  /** One address has its share of the costly reads in flight (adapters/http/read_gate.ts). */
  too_many_reads: { status: 429, body: "coded", headers: { "Retry-After": "1" } },
  /** Every slot for the costly reads is taken and stayed taken (adapters/http/read_gate.ts). */
  reads_busy: { status: 503, body: "coded", headers: { "Retry-After": "2" } },
  /** The thumbnail queue is full (services/upload/ingest.ts). */
  thumbnails_busy: { status: 503, body: "detail", headers: { "Retry-After": "2" } },
  storage_unavailable: {
    status: 503,
    body: "detail",
    headers: RETRY_SOON,
    detail: "Storage is unavailable, try again shortly",
    log: { level: "error", message: "storage unavailable" },
  },
  database_unavailable: {
    status: 503,
    body: "detail",
    headers: RETRY_SOON,
    detail: "Database is unavailable, try again shortly",
    log: { level: "error", message: "database unavailable" },
  },
  /**
   * A write that lost a race (deadlock, serialization) on every one of its tries: contention
   * that passes, so the client tries again (tests/db_client_test.ts).
   */
  write_conflict: {
    status: 503,
    body: "detail",
    headers: { "Retry-After": "1" },
    detail: "Concurrent changes conflicted, try again",
    log: { level: "warn", message: "write kept conflicting with concurrent writes" },
  },
  internal_error: {
    status: 500,
    body: "detail",
    detail: "Internal server error",
    log: { level: "error", message: "unhandled error" },
  },
} as const satisfies Record<string, ErrorRow>;

/** A code of the table. */
export type ErrorCode = keyof typeof ERRORS;

/** A structured detail (Fresh's HttpError form): its members are spread at the top level. */
export type ErrorDetail = string | ({ detail: string } & Record<string, unknown>);

/** What an AppError may carry beside its code and message. */
export interface AppErrorOptions {
  /** Members of a `coded` body after `code` and `detail`, e.g. `max_tags`. */
  fields?: Record<string, unknown>;
  /** Headers added to the row's. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/**
 * The one error type: a stable `code` of ERRORS, a client-safe message and structured fields.
 * `new AppError(status, detail)` (Fresh's `HttpError`) gives the status and body directly, for a
 * refusal no code names (tests, one-off routes); every refusal of the service itself has a code.
 */
export class AppError extends Error {
  override name = "AppError";
  readonly code: string;
  readonly status: number;
  readonly fields: Record<string, unknown>;
  /** The headers of the answer (the row's and the error's own) and the cause. */
  readonly options: { cause?: unknown; headers: Record<string, string> };
  /** The row of `code`, or null for the direct (status, detail) form. */
  readonly row: ErrorRow | null;
  readonly #body: Record<string, unknown> | null = null;

  constructor(code: ErrorCode, message: string, options?: AppErrorOptions);
  constructor(status: number, detail: ErrorDetail, options?: AppErrorOptions);
  constructor(kind: ErrorCode | number, detail: ErrorDetail, options: AppErrorOptions = {}) {
    super(typeof detail === "string" ? detail : detail.detail, { cause: options.cause });
    this.fields = options.fields ?? {};
    if (typeof kind === "number") {
      this.row = null;
      this.status = kind;
      this.#body = typeof detail === "string" ? { detail } : { ...detail };
      this.code = typeof this.#body.code === "string" ? this.#body.code : `http_${kind}`;
    } else {
      this.row = ERRORS[kind];
      this.code = kind;
      this.status = this.row.status;
    }
    this.options = { cause: options.cause, headers: { ...this.row?.headers, ...options.headers } };
  }

  /** The body a client gets. */
  get body(): Record<string, unknown> | null {
    if (!this.row) return this.#body;
    const detail = this.row.detail ?? this.message;
    if (this.row.body === "none") return null;
    return this.row.body === "coded" ? { code: this.code, detail, ...this.fields } : { detail };
  }
}

/** An error as a client gets it. */
export interface Problem {
  code: string;
  status: number;
  headers: Record<string, string>;
  /** The JSON body, or null for none. */
  body: Record<string, unknown> | null;
  /** What to log, if anything, with the error to log. */
  log?: { level: "warn" | "error"; message: string; err: unknown };
}

/** The answer to `err`, whatever it is: an unknown error is a 500 that tells the client nothing. */
export function problemOf(err: unknown): Problem {
  const e = err instanceof AppError
    ? err
    : new AppError(infrastructureCode(err) ?? "internal_error", "", { cause: err });
  const { code, status, body } = e;
  const problem: Problem = { code, status, headers: e.options.headers, body };
  const logged = err instanceof AppError ? err : e.cause;
  if (e.row?.log) problem.log = { ...e.row.log, err: logged };
  else if (status >= 500) {
    problem.log = { level: "error", message: "request failed", err: e.cause ?? e };
  }
  return problem;
}

/** The code of `err` when it is an AppError, else null (for the few callers that branch on one). */
export function errorCode(err: unknown): string | null {
  return err instanceof AppError ? err.code : null;
}

/**
 * `parse()`, with a refusal of code `code` restated as one of the request field `field`
 * (`field: why`), under code `as` (default: the same code); any other error passes unchanged.
 */
export function forField<T>(field: string, code: ErrorCode, parse: () => T, as = code): T {
  try {
    return parse();
  } catch (e) {
    if (errorCode(e) !== code) throw e;
    const { fields, options } = e as AppError;
    throw new AppError(as, `${field}: ${(e as Error).message}`, { fields, cause: options.cause });
  }
}

/** `err` when it is an AppError already, else an AppError of `code` caused by it. */
export function asAppError(err: unknown, code: ErrorCode, message: string): AppError {
  return err instanceof AppError ? err : new AppError(code, message, { cause: err });
}

// Failures of the infrastructure, recognised by the codes of the PostgreSQL driver (vendored
// postgres.js) and of the operating system. db/client.ts re-exports both predicates.

const UNAVAILABLE_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "CONNECT_TIMEOUT",
  "QUEUE_TIMEOUT",
  "CONNECTION_CLOSED",
  "CONNECTION_ENDED",
  "CONNECTION_DESTROYED",
]);

/**
 * True when `e` says the database could not be used (the API answers 503): any error while
 * connecting, whatever its code (postgres.js patched to mark it: a database refusing connections
 * (55000), starting up or shutting down (57P03), full (53300), a failed sign-in), and a lost or
 * timed-out connection.
 */
export function isDatabaseUnavailable(e: unknown): boolean {
  const err = e as { connecting?: boolean; code?: unknown; severity?: unknown } | null;
  if (err?.connecting === true) return true;
  const code = typeof err?.code === "string" ? err.code : undefined;
  // From the server (a PostgresError carries the server's severity): connection exceptions
  // (08), operator intervention such as pg_terminate_backend or a statement timeout (57), too
  // many connections (53300).
  if (e instanceof Error && typeof err?.severity === "string" && code !== undefined) {
    return /^(08|57|53300$)/.test(code);
  }
  // From the driver or the socket: its own codes, or a plain connection error.
  if (code && UNAVAILABLE_CODES.has(code)) return true;
  return e instanceof Error && /connect|terminat|ECONN/i.test(e.message);
}

/** A deadlock or a serialization failure: the transaction may succeed when tried again. */
export function isRetryableTransactionError(e: unknown): boolean {
  const code = (e as { code?: string })?.code;
  return code === "40P01" || code === "40001"; // deadlock, serialization failure
}

/** The code of an infrastructure failure that is no AppError (storage's are), or null. */
function infrastructureCode(err: unknown): ErrorCode | null {
  if (isDatabaseUnavailable(err)) return "database_unavailable";
  if (isRetryableTransactionError(err)) return "write_conflict";
  return null;
}
