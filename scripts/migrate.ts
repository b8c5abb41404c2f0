/** `deno task db:migrate`: applies pending migrations (the short-ID backfill included) and exits. */
import { migrate } from "../db/migrate.ts";
import { loadConfig } from "../lib/config.ts";
import { Logger } from "../lib/log.ts";
import { openResources } from "../lib/resources.ts";

const config = loadConfig();
const log = new Logger(config.LOG_LEVEL);
const resources = await openResources(config, log);
try {
  const applied = await migrate(resources.sql, resources.store, {
    log: (msg, f) => log.info(msg, f),
  });
  log.info("migrations done", { applied });
} finally {
  await resources.close();
}
