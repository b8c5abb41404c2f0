/**
 * The one place where an error becomes an API response: the table of domain/errors.ts (`problemOf`)
 * gives its status, headers and body, and what the log gets. A plain error is
 * `{"detail": "message"}`; a structured one has its members at the top level. Clients never see a
 * stack trace, SQL or storage detail: the log gets those, with the request id.
 */
import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode, StatusCode } from "hono/utils/http-status";
import { AppError, problemOf } from "../domain/errors.ts";
import type { AppEnv } from "./env.ts";

export { AppError };
/** Fresh's name for the one error type: `new HttpError(status, detail)` is AppError's direct form. */
export { AppError as HttpError };

/** Hono's onError: maps every error to its status and shape, and logs what clients must not see. */
export function onError(err: Error, c: Context<AppEnv>): Response {
  if (err instanceof HTTPException) {
    // Hono's own refusals (malformed JSON, wrong media type) keep their status, in our shape.
    const status = err.status as ContentfulStatusCode;
    return c.json({ detail: err.message || "Bad request" }, status);
  }
  const problem = problemOf(err);
  if (problem.log) {
    const { level, message, err: logged } = problem.log;
    c.get("log")?.[level](message, { status: problem.status, err: logged });
  }
  if (problem.body === null) {
    return c.body(null, problem.status as StatusCode, problem.headers);
  }
  return c.json(problem.body, problem.status as ContentfulStatusCode, problem.headers);
}
