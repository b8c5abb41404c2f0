/**
 * The service in a process of its own whose thumbnailer never answers: an upload stores its
 * original and then waits for a thumbnail that never comes, so a test can kill the process at
 * exactly that point (a crash after the original is stored, before the row is written).
 * Configuration from the environment as the service parses it; the database must be migrated.
 * Prints `listening <port>`.
 */
import { createApp } from "../../wiring/app.ts";
import { createSql } from "../../db/client.ts";
import { loadConfig } from "../../adapters/config.ts";
import { Logger } from "../../adapters/log.ts";
import { s3Settings, S3Store } from "../../adapters/storage/s3.ts";

const config = loadConfig();
const app = createApp({
  config,
  sql: createSql(config.DATABASE_URL!),
  store: new S3Store(s3Settings(config)),
  log: new Logger(config.LOG_LEVEL),
  thumbnails: { thumbnail: () => new Promise(() => {}) },
});
Deno.serve({
  port: config.PORT,
  hostname: "127.0.0.1",
  onListen: ({ port }) => console.log(`listening ${port}`),
}, app.fetch);
