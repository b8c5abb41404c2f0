/**
 * The last line of defence: an error that escapes everything (a rejection nobody handles, an
 * exception thrown from a dependency's callback) is logged, with the id of the request it came
 * from when that is known, and never ends the process. Without it, Deno ends the process on the
 * first such error, and every request in flight with it.
 *
 * The request is known through `requestScope`, which the shell (wiring/app_shell.ts) runs every request
 * in: a rejection or a microtask's exception keeps the scope it was made in. An exception thrown
 * from a timer does not, and is logged without a request id.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Logger } from "../log.ts";

/** The request's logger (its lines carry the request id), for code that runs on its behalf. */
export const requestScope = new AsyncLocalStorage<Logger>();

/** Installs the handlers on the global scope; returns a function that removes them. */
export function installLastResort(log: Logger): () => void {
  const logger = () => requestScope.getStore() ?? log;
  const onRejection = (event: PromiseRejectionEvent) => {
    event.preventDefault();
    logger().error("unhandled rejection", { err: event.reason });
  };
  const onError = (event: ErrorEvent) => {
    event.preventDefault();
    logger().error("uncaught exception", { err: event.error ?? event.message });
  };
  globalThis.addEventListener("unhandledrejection", onRejection);
  globalThis.addEventListener("error", onError);
  return () => {
    globalThis.removeEventListener("unhandledrejection", onRejection);
    globalThis.removeEventListener("error", onError);
  };
}
