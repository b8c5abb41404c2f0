/**
 * Opens what a full service instance (or an operator script) runs on: the database (the given
 * one, or the embedded default under DATA_DIR) and the object store (S3, or the filesystem
 * store under DATA_DIR), with the generated credentials of the embedded default.
 */
import { join } from "node:path";
import { createSearchSql, createSql } from "../db/client.ts";
import type { Config } from "../adapters/config.ts";
import {
  localSecrets,
  lockDataDir,
  startEmbeddedDatabase,
} from "../adapters/embedded_postgres/mod.ts";
import type { Logger } from "../adapters/log.ts";
import { FsStore } from "../adapters/storage/fs.ts";
import type { ObjectStore } from "../adapters/storage/mod.ts";
import { s3Settings, S3Store } from "../adapters/storage/s3.ts";
import type { SignIn } from "../adapters/startup.ts";
import type { Resources } from "./service.ts";

export type { Resources } from "./service.ts";

/** The object store the configuration names. */
export function openStore(config: Config): ObjectStore {
  if (config.S3_BUCKET) {
    return new S3Store(s3Settings(config));
  }
  return new FsStore(join(config.DATA_DIR, "objects"));
}

/** Opens the database and the store, starting the embedded default when nothing is configured. */
export async function openResources(input: Config, log: Logger): Promise<Resources> {
  let config = input;
  let signIn: SignIn = { username: input.ADMIN_USERNAME };
  const closers: (() => Promise<void>)[] = [];
  const embedded = !config.DATABASE_URL || !config.S3_BUCKET;
  if (embedded) {
    const lock = await lockDataDir(config.DATA_DIR);
    closers.push(() => Promise.resolve(lock.close()));
  }
  if (!config.DATABASE_URL) {
    const secrets = await localSecrets(config.DATA_DIR);
    config = {
      ...config,
      ADMIN_PASSWORD: config.ADMIN_PASSWORD ?? secrets.adminPassword,
      JWT_SECRET: config.JWT_SECRET ?? secrets.jwtSecret,
    };
    if (!input.ADMIN_PASSWORD) {
      signIn = {
        ...signIn,
        password: secrets.adminPassword,
        keptIn: join(config.DATA_DIR, "secrets.json"),
      };
    }
    const started = performance.now();
    const db = await startEmbeddedDatabase(config.DATA_DIR, secrets.databasePassword);
    log.info("embedded PostgreSQL started", { ms: Math.round(performance.now() - started) });
    closers.push(db.stop);
    config = { ...config, DATABASE_URL: db.url };
  }
  const sql = createSql(config.DATABASE_URL!);
  closers.push(() => sql.end({ timeout: 5 }));
  const probeSql = createSql(config.DATABASE_URL!, { max: 1 });
  closers.push(() => probeSql.end({ timeout: 1 }));
  const searchSql = createSearchSql(config.DATABASE_URL!, config.SEARCH_CONNECTIONS);
  closers.push(() => searchSql.end({ timeout: 5 }));
  const store = openStore(config);
  return {
    config,
    sql,
    probeSql,
    searchSql,
    store,
    signIn,
    close: async () => {
      for (const close of closers.reverse()) await close().catch(() => {});
    },
  };
}
