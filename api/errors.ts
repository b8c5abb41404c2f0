/**
 * One error type for the HTTP layer and the one place where errors become responses.
 * A plain error is `{"detail": "message"}`; a structured one has its members at the top level.
 * Clients never see a stack trace, SQL or storage detail: the log gets those, with the request id.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { isDatabaseUnavailable, isRetryableTransactionError } from "../db/client.ts";
import { StorageError } from "../lib/storage/mod.ts";
import { TagRuleError } from "../lib/tags/errors.ts";
import { TooManyTagsError } from "../lib/tags/names.ts";
import type { AppEnv } from "./env.ts";

/** Structured error detail: its members are spread at the top level of the body. */
export type ErrorDetail = string | ({ detail: string } & Record<string, unknown>);

/** An error with an HTTP status and a client-facing detail. */
export class HttpError extends Error {
  override name = "HttpError";
  constructor(
    readonly status: ContentfulStatusCode,
    readonly detail: ErrorDetail,
    readonly options: { cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    super(typeof detail === "string" ? detail : detail.detail, { cause: options.cause });
  }
}

/** The response body of an error detail. */
export function errorBody(detail: ErrorDetail): Record<string, unknown> {
  return typeof detail === "string" ? { detail } : { ...detail };
}

/** Hono's onError: maps every error to its status and shape, and logs what clients must not see. */
export function onError(err: Error, c: Context<AppEnv>): Response {
  const log = c.get("log");
  if (err instanceof HttpError) {
    if (err.status >= 500) {
      log?.error("request failed", { status: err.status, err: err.cause ?? err });
    }
    return c.json(errorBody(err.detail), err.status, err.options.headers);
  }
  if (err instanceof HTTPException) {
    // Hono's own refusals (malformed JSON, wrong media type) keep their status, in our shape.
    const status = err.status as ContentfulStatusCode;
    return c.json({ detail: err.message || "Bad request" }, status);
  }
  if (err instanceof TooManyTagsError) {
    return c.json({ code: "too_many_tags", detail: err.message, max_tags: err.max }, 422);
  }
  if (err instanceof TagRuleError) {
    return c.json({ code: err.code, detail: err.message }, err.status);
  }
  if (err instanceof StorageError) {
    log?.error("storage unavailable", { err });
    return c.json({ detail: "Storage is unavailable, try again shortly" }, 503, {
      "Retry-After": "5",
    });
  }
  if (isDatabaseUnavailable(err)) {
    log?.error("database unavailable", { err });
    return c.json({ detail: "Database is unavailable, try again shortly" }, 503, {
      "Retry-After": "5",
    });
  }
  if (isRetryableTransactionError(err)) {
    // A write that lost a race (deadlock, serialization) on every one of its tries: contention
    // that passes, so the client tries again, as after a 503 for a busy pool. It was a 500 (a CI
    // run: 40 tag edits and two deletes at once on a machine busy with the rest of the suite).
    log?.warn("write kept conflicting with concurrent writes", { err });
    return c.json({ detail: "Concurrent changes conflicted, try again" }, 503, {
      "Retry-After": "1",
    });
  }
  log?.error("unhandled error", { err });
  return c.json({ detail: "Internal server error" }, 500);
}
