/**
 * Serving with client timeouts and a graceful stop, shared by main.ts and reader.ts. Errors that
 * escape everything are logged, never fatal (last_resort.ts). On SIGINT or SIGTERM the server
 * answers new requests 503 (`Connection: close`, so load balancers move on), lets the ones in
 * flight finish within a bound, then closes the listener and runs `onStop`.
 *
 * With CLIENT_TIMEOUT_SECONDS (the default) the server is `node:http`'s: a connection whose
 * request line, headers or body make no progress for that long is closed, and its headers may
 * take that long in all; once the request has arrived, the handler takes as long as it needs
 * (tests/slow_clients_test.ts). Deno.serve has neither bound, and keeps a connection whose request
 * stalls open for good, even after answering it with `Connection: close`. It serves small reads
 * about 1.5 times as fast, so CLIENT_TIMEOUT_SECONDS=0 chooses it, for a service only a proxy
 * that bounds slow clients itself can reach. The fetch handler is adapted by `@hono/node-server`,
 * without replacing the global Request and Response (which would break every Deno.serve and
 * fetch in the process).
 *
 * Stopping a Deno.serve: in Deno 2.9, `server.shutdown()` makes request bodies that are still
 * arriving unreadable (denoland/deno#36809), so the requests in flight finish first.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { Logger } from "../log.ts";
import { installLastResort } from "./last_resort.ts";

/** Options of `listen`. */
export interface ListenOptions {
  port: number;
  hostname: string;
  handler: Deno.ServeHandler;
  /**
   * CLIENT_TIMEOUT_SECONDS in ms: how long a request may make no progress, and its headers take;
   * 0 serves with Deno.serve, without client timeouts.
   */
  clientTimeoutMs: number;
}

/** A listening server. */
export interface Listener {
  /** The port listened on (the one chosen when 0 was asked for). */
  port: number;
  /** Stops accepting, closes idle connections; resolves once every connection has ended. */
  close(): Promise<void>;
}

/** Listens on `hostname:port` with `handler` and the client timeouts (see the module comment). */
export async function listen(opts: ListenOptions): Promise<Listener> {
  const timeout = opts.clientTimeoutMs;
  if (timeout <= 0) {
    const server = Deno.serve(
      { port: opts.port, hostname: opts.hostname, onListen: () => {} },
      opts.handler,
    );
    return { port: server.addr.port, close: () => server.shutdown() };
  }
  const onRequest = getRequestListener((req, env) => {
    const { incoming, outgoing } = env;
    const socket = incoming.socket;
    // The request has arrived with its headers, or once its body has; from then on the handler
    // sets the pace.
    const { "content-length": length, "transfer-encoding": chunked } = incoming.headers;
    if (chunked !== undefined || Number(length ?? 0) > 0) {
      incoming.once("end", () => socket.setTimeout(0));
    } else socket.setTimeout(0);
    outgoing.once("finish", () => socket.setTimeout(timeout));
    const completed = new Promise<void>((resolve) => outgoing.once("close", resolve));
    // The adapter's request is a stand-in that Request's constructor refuses (Hono's body limit
    // makes a Request from it): hand the handler a real one.
    const request = new Request(req.url, {
      method: req.method,
      headers: req.headers,
      body: req.body,
      signal: req.signal,
      duplex: "half",
    } as RequestInit);
    return opts.handler(request, {
      remoteAddr: {
        transport: "tcp",
        hostname: socket.remoteAddress ?? "",
        port: socket.remotePort ?? 0,
      },
      completed,
    });
  }, { overrideGlobalObjects: false });
  const server = http.createServer({
    headersTimeout: timeout,
    requestTimeout: 0, // a slow upload that keeps coming is never cut; stalls are the socket's
    connectionsCheckingInterval: Math.max(100, Math.min(1000, timeout / 4)),
  } as http.ServerOptions, onRequest);
  server.timeout = timeout; // socket inactivity: no byte in either direction
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.hostname, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}

/** Options of `serveUntilSignal`. */
export interface ServeOptions extends ListenOptions {
  log: Logger;
  /** How long in-flight requests may take once a stop was asked for. */
  graceMs: number;
  /** Releases what the server used (pools, connections); runs after the listener closed. */
  onStop: () => Promise<void> | void;
  /** Runs once the listener is bound, after the "listening" log line. */
  onListen?: (addr: { hostname: string; port: number }) => void;
}

/** Serves `handler` until a signal arrives, then stops gracefully and exits 0. */
export async function serveUntilSignal(opts: ServeOptions): Promise<Listener> {
  const { log } = opts;
  installLastResort(log);
  let stopping = false;
  let inFlight = 0;
  let drained: (() => void) | undefined;
  const server = await listen({
    ...opts,
    handler: async (req, info) => {
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
    },
  });
  log.info("listening", { url: `http://${opts.hostname}:${server.port}` });
  opts.onListen?.({ hostname: opts.hostname, port: server.port });

  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal, in_flight: inFlight });
    const grace = new Promise((r) => setTimeout(r, opts.graceMs));
    const idle = inFlight === 0 ? Promise.resolve() : new Promise<void>((r) => drained = r);
    await Promise.race([idle, grace]);
    await Promise.race([server.close(), grace]);
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
