/**
 * The service under benchmark, in its own process: built from the environment exactly as
 * main.ts builds it (config, resources, migrations, thumbnail pool, job queue, app), served with
 * Deno.serve on HOST:PORT (PORT=0 picks a free port). Prints `{"port": n}` on stdout once
 * listening; SIGTERM stops it.
 */
import { createApp, ensureAssets } from "../app.ts";
import { migrate } from "../db/migrate.ts";
import { loadConfig } from "../lib/config.ts";
import { Logger } from "../lib/log.ts";
import { openResources } from "../lib/resources.ts";
import { ThumbnailPool } from "../lib/images/thumbnails/pool.ts";
import { JobQueue } from "../lib/jobs/mod.ts";
import { implicationsJob } from "../lib/tags/mod.ts";

const log = new Logger(loadConfig().LOG_LEVEL);
const resources = await openResources(loadConfig(), log);
const { config, sql, store } = resources;
await migrate(sql, store);
const thumbnails = await ThumbnailPool.start({
  size: config.THUMBNAIL_WORKERS,
  maxPixels: config.MAX_IMAGE_PIXELS,
});
const jobs = await JobQueue.start(config.DATABASE_URL!, log);
await jobs.work(implicationsJob(sql, log));
await ensureAssets();
const app = createApp({ config, sql, store, log, thumbnails, jobs });
const server = Deno.serve({
  port: config.PORT,
  hostname: config.HOST,
  onListen: ({ port }) => console.log(JSON.stringify({ port, workers: config.THUMBNAIL_WORKERS })),
}, app.fetch);

Deno.addSignalListener("SIGTERM", async () => {
  await Promise.race([server.shutdown(), new Promise((r) => setTimeout(r, 2000))]);
  thumbnails.close();
  await jobs.stop(1000);
  await resources.close();
  Deno.exit(0);
});
