/**
 * Serving with a graceful stop, shared by main.ts and reader.ts. Errors that escape everything
 * are logged, never fatal (last_resort.ts). On SIGINT or SIGTERM the
 * server answers new requests 503 (`Connection: close`, so load balancers move on), lets the
 * ones in flight finish within a bound, then closes the listener and runs `onStop`.
 *
 * The order matters: in Deno 2.9, `server.shutdown()` makes request bodies that are still
 * arriving unreadable (denoland/deno#36809), which would fail an upload caught mid-body.
 */
import type { Logger } from "../log.ts";
import { installLastResort } from "./last_resort.ts";

/** Options of `serveUntilSignal`. */
export interface ServeOptions {
  port: number;
  hostname: string;
  log: Logger;
  handler: Deno.ServeHandler;
  /** How long in-flight requests may take once a stop was asked for. */
  graceMs: number;
  /** Releases what the server used (pools, connections); runs after the listener closed. */
  onStop: () => Promise<void> | void;
  /** Runs once the listener is bound, after the "listening" log line. */
  onListen?: (addr: { hostname: string; port: number }) => void;
}

/** Serves `handler` until a signal arrives, then stops gracefully and exits 0. */
export function serveUntilSignal(opts: ServeOptions): Deno.HttpServer {
  const { log } = opts;
  installLastResort(log);
  let stopping = false;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const server = Deno.serve({
    port: opts.port,
    hostname: opts.hostname,
    onListen: (addr) => {
      log.info("listening", { url: `http://${addr.hostname}:${addr.port}` });
      opts.onListen?.(addr);
    },
  }, async (req, info) => {
    if (stopping) {
      return Response.json({ detail: "Shutting down" }, {
        status: 503,
        headers: { "connection": "close", "retry-after": "5" },
      });
    }
    inFlight++;
    try {
      return await opts.handler(req, info);
    } finally {
      if (--inFlight === 0) drained?.();
    }
  });

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal, in_flight: inFlight });
    const grace = new Promise((r) => setTimeout(r, opts.graceMs));
    const idle = inFlight === 0 ? Promise.resolve() : new Promise<void>((r) => drained = r);
    await Promise.race([idle, grace]);
    await Promise.race([server.shutdown(), grace]);
    await opts.onStop();
    log.info("stopped");
    Deno.exit(0);
  };
  // Edge platforms may offer no signal listeners; they then stop the isolate themselves.
  for (const signal of ["SIGINT", "SIGTERM"] as const) {
    try {
      Deno.addSignalListener(signal, () => stop(signal));
    } catch { /* not supported here */ }
  }
  return server;
}
