/**
 * The whole service: config -> resources (database, storage) -> migrate -> thumbnail pool ->
 * app -> Deno.serve. SIGINT and SIGTERM stop accepting, let in-flight requests finish within a
 * bound, then close the pool, the database pool and the embedded PostgreSQL.
 */
import { createApp } from "./app.ts";
import { migrate } from "./db/migrate.ts";
import { ConfigError, loadConfig } from "./lib/config.ts";
import { DataDirLockedError } from "./lib/embedded.ts";
import { Logger } from "./lib/log.ts";
import { openResources } from "./lib/resources.ts";
import { ThumbnailPool } from "./lib/thumbnails/pool.ts";

const SHUTDOWN_GRACE_MS = 25_000;

async function main() {
  let config;
  try {
    config = loadConfig();
  } catch (e) {
    if (e instanceof ConfigError) {
      console.error(e.message);
      Deno.exit(1);
    }
    throw e;
  }
  const log = new Logger(config.LOG_LEVEL);
  let resources;
  try {
    resources = await openResources(config, log);
  } catch (e) {
    if (e instanceof DataDirLockedError) {
      console.error(e.message);
      Deno.exit(1);
    }
    throw e;
  }
  config = resources.config;
  const { sql, store } = resources;
  await migrate(sql, store, { log: (msg, f) => log.info(msg, f) });

  const thumbnails = await ThumbnailPool.start({
    size: config.THUMBNAIL_WORKERS,
    maxPixels: config.MAX_IMAGE_PIXELS,
  });
  const app = createApp({ config, sql, store, log, thumbnails });

  const server = Deno.serve({
    port: config.PORT,
    hostname: config.HOST,
    onListen: ({ hostname, port }) => log.info("listening", { url: `http://${hostname}:${port}` }),
  }, app.fetch);

  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info("shutting down", { signal });
    const grace = new Promise((r) => setTimeout(r, SHUTDOWN_GRACE_MS));
    await Promise.race([server.shutdown(), grace]);
    thumbnails.close();
    await resources.close();
    log.info("stopped");
    Deno.exit(0);
  };
  Deno.addSignalListener("SIGINT", () => shutdown("SIGINT"));
  Deno.addSignalListener("SIGTERM", () => shutdown("SIGTERM"));
}

if (import.meta.main) await main();
