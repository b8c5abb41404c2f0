/**
 * The service in a process of its own, for the soak test: configuration from the environment
 * (DATABASE_URL, S3_*, ADMIN_PASSWORD, JWT_SECRET, PORT, ...) exactly as the service parses it,
 * migrations, a thumbnail pool and the app on Deno.serve. Prints `listening <port>` when ready;
 * stops on SIGTERM.
 */
import { createApp } from "../../wiring/app.ts";
import { migrate } from "../../services/migrate.ts";
import { loadConfig } from "../../adapters/config.ts";
import { Logger } from "../../adapters/log.ts";
import { openResources } from "../../wiring/resources.ts";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";

const config0 = loadConfig();
const log = new Logger(config0.LOG_LEVEL);
const resources = await openResources(config0, log);
const config = resources.config;
await migrate(resources.sql, resources.store);
const thumbnails = await ThumbnailPool.start({
  size: config.THUMBNAIL_WORKERS,
  maxPixels: config.MAX_IMAGE_PIXELS,
});
const app = createApp({ config, sql: resources.sql, store: resources.store, log, thumbnails });
const server = Deno.serve({
  port: config.PORT,
  hostname: "127.0.0.1",
  onListen: ({ port }) => console.log(`listening ${port}`),
}, app.fetch);

Deno.addSignalListener("SIGTERM", async () => {
  await server.shutdown();
  thumbnails.close();
  await resources.close();
  Deno.exit(0);
});
