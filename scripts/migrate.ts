/** `deno task db:migrate`: applies pending migrations (the short-ID backfill included) and exits. */
import { migrate } from "../services/migrate.ts";
import { loadConfig } from "../adapters/config.ts";
import { Logger } from "../adapters/log.ts";
import { openResources } from "../wiring/resources.ts";

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
