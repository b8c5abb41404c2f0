/**
 * Builds a complete service for a test file: a fresh database (migrated), s3rver, and the app,
 * with configuration built from `env` overrides exactly as the service would parse it, put
 * together by wiring/service.ts as main.ts's is, minus what a test leaves out (the thumbnail
 * workers unless given, the job queue unless asked for, the warm-up, the sweeper, the backfills
 * and the priorities).
 */
import type { createApp } from "../../wiring/app.ts";
import { type Config, loadConfig } from "../../adapters/config.ts";
import { createSearchSql, createSql } from "../../db/client.ts";
import type { CaptionReading } from "../../services/captions/recognition.ts";
import { captureLogger } from "../../adapters/log.ts";
import type { Services, Thumbnailer } from "../../services/deps.ts";
import { buildService } from "../../wiring/service.ts";
import { writeSide } from "../../wiring/write_side.ts";
import {
  newHashSlots,
  type PasswordHasher,
  scryptHasher,
  threadPoolDerive,
} from "../../services/passwords.ts";
import { type FreshDatabase, migratedDatabase } from "./db.ts";
import { disposeS3, startS3, type TestS3 } from "./s3.ts";

/** The password and secret every test service uses. */
export const TEST_PASSWORD = "correct horse battery staple";
export const TEST_SECRET = "test-secret-that-is-at-least-32-bytes-long!!";

/** A service under test. */
export interface TestService {
  app: ReturnType<typeof createApp>;
  services: Services;
  config: Config;
  db: FreshDatabase;
  s3: TestS3;
  logs: string[];
  close(): Promise<void>;
}

/** Options of `startService`. */
export interface TestServiceOptions {
  env?: Record<string, string>;
  thumbnails?: Thumbnailer;
  /** Start the job queue and work the service's job kinds, as main.ts does. */
  jobs?: boolean;
  /** With `jobs`: the caption recogniser the recognition jobs use (none: no recognition). */
  captionReader?: CaptionReading;
  /**
   * The password hasher. By default scrypt at N=2^10: OWASP's N=2^17 took 2.5-3.7 s a hash on
   * the shared test machine; tests/accounts_signin_test.ts uses the real parameters.
   */
  passwords?: PasswordHasher;
  /** Share a database or s3 with another service (for replica tests). */
  db?: FreshDatabase;
  s3?: TestS3;
}

/** A cheap scrypt for tests (see TestServiceOptions.passwords). */
export const TEST_HASHER = scryptHasher(
  { N: 2 ** 10, r: 8, p: 1 },
  newHashSlots(4, 10_000),
  threadPoolDerive,
);

/** Configuration as the service would parse it, pointed at `db` and `s3`. */
export function testConfig(db: FreshDatabase, s3: TestS3, env: Record<string, string> = {}) {
  return loadConfig({
    DATABASE_URL: db.url,
    S3_BUCKET: s3.settings.bucket,
    S3_ENDPOINT: s3.endpoint,
    S3_ACCESS_KEY_ID: "S3RVER",
    S3_SECRET_ACCESS_KEY: "S3RVER",
    ADMIN_USERNAME: "admin",
    ADMIN_PASSWORD: TEST_PASSWORD,
    JWT_SECRET: TEST_SECRET,
    LOG_LEVEL: "debug",
    ...env,
  });
}

/** Starts a migrated service on a fresh database and s3rver. */
export async function startService(opts: TestServiceOptions = {}): Promise<TestService> {
  const db = opts.db ?? await migratedDatabase();
  const s3 = opts.s3 ?? await startS3();
  const config = testConfig(db, s3, opts.env);
  const { log, lines } = captureLogger(config.LOG_LEVEL);
  // The service's own pools, bounded as in production; `db.sql` stays for set-up and inspection.
  const sql = createSql(db.url);
  const probeSql = createSql(db.url, { max: 1 });
  const searchSql = createSearchSql(db.url, config.SEARCH_CONNECTIONS);
  const service = await buildService({
    config,
    log,
    writes: writeSide,
    resources: {
      config,
      sql,
      probeSql,
      searchSql,
      store: s3.store,
      signIn: { username: config.ADMIN_USERNAME },
      close: async () => {
        await sql.end({ timeout: 1 });
        await probeSql.end({ timeout: 1 });
        await searchSql.end({ timeout: 1 });
      },
    },
    thumbnails: opts.thumbnails ?? null,
    jobs: opts.jobs ? { maxConnections: 2 } : false,
    recognition: opts.captionReader ?? false,
    warmUp: false,
    sweeper: false,
    similarBackfill: false,
    priorities: false,
    buildAssets: false,
    jobsGraceMs: 1000,
    passwords: opts.passwords ?? TEST_HASHER,
  });
  return {
    app: service.app,
    services: service.services,
    config,
    db,
    s3,
    logs: lines,
    close: async () => {
      await service.close();
      if (!opts.db) await db.drop();
      if (!opts.s3) await disposeS3(s3);
    },
  };
}

/** Runs `fn` on a service started with `env` overrides, and closes the service after. */
export async function withService(
  env: Record<string, string>,
  fn: (svc: TestService) => Promise<void>,
): Promise<void> {
  const svc = await startService({ env });
  try {
    await fn(svc);
  } finally {
    await svc.close();
  }
}
