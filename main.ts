/**
 * The whole service: wiring/service.ts builds it (config -> resources (database, storage) ->
 * migrate -> thumbnail pool and job queue -> app -> background work), then the HTTP server
 * (adapters/http/serve.ts). SIGINT and
 * SIGTERM stop accepting, let in-flight requests finish within a bound, then stop the background
 * work and close the pool, the database pools and the embedded PostgreSQL.
 */
import { loadConfig } from "./adapters/config.ts";
import { serveUntilSignal } from "./adapters/http/mod.ts";
import { listeningLine, orExit, say, startingLine } from "./adapters/startup.ts";
import { buildService } from "./wiring/service.ts";
import { writeSide } from "./wiring/write_side.ts";

const SHUTDOWN_GRACE_MS = 25_000;

async function main() {
  const given = await orExit(() => loadConfig());
  say(startingLine(given));
  // A setting to fix, or an embedded database that cannot start, is a message, not a stack.
  const service = await orExit(() =>
    buildService({ config: given, writes: writeSide, dev: Deno.args.includes("--dev") })
  );
  const { config } = service;
  await serveUntilSignal({
    port: config.PORT,
    hostname: config.HOST,
    clientTimeoutMs: config.CLIENT_TIMEOUT_SECONDS * 1000,
    log: service.log,
    handler: service.app.fetch,
    graceMs: SHUTDOWN_GRACE_MS,
    onListen: (addr) => say(listeningLine(addr, service.signIn)),
    onStop: service.close,
  });
}

if (import.meta.main) await main();
