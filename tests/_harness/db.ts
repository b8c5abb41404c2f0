/** A fresh PostgreSQL database per test file, on the server the run resolved. */
import postgres from "postgres";
import { createSql, type Sql } from "../../db/client.ts";
import type { NewImage } from "../../db/images.ts";
import { migrate } from "../../services/migrate.ts";
import { FsStore } from "../../adapters/storage/fs.ts";

/** Names this run's databases (set by tests/run.ts), so that it can drop what is left of them. */
const RUN_ID_ENV = "TEST_RUN_ID";

/** The server URL of this run (set by tests/run.ts). */
export function serverUrl(): string {
  const url = Deno.env.get("TEST_DATABASE_URL");
  if (!url) throw new Error("TEST_DATABASE_URL is not set: run the tests with `deno task test`");
  return url;
}

/** A database made for one test file, dropped by `drop()`. */
export interface FreshDatabase {
  url: string;
  name: string;
  sql: Sql;
  drop(): Promise<void>;
}

/**
 * Names the run's template (set by tests/run.ts): a database with every migration applied, that
 * migratedDatabase() copies instead of migrating each new database.
 */
const TEMPLATE_ENV = "TEST_TEMPLATE_DATABASE";

/**
 * Creates an empty database, named `t_<run id>_…`, on the test server (or on `server`); a copy of
 * `template` when one is given.
 */
export async function freshDatabase(
  server = serverUrl(),
  template?: string,
): Promise<FreshDatabase> {
  const run = Deno.env.get(RUN_ID_ENV);
  const name = `t_${run ? `${run}_` : ""}${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}${template ? ` template "${template}"` : ""}`);
  await admin.end();
  const u = new URL(server);
  u.pathname = `/${name}`;
  const url = u.toString();
  // Set-up and inspection may run long statements: no service bounds on this pool.
  const sql = createSql(url, { bounded: false });
  return {
    url,
    name,
    sql,
    drop: async () => {
      await sql.end({ timeout: 1 });
      const admin = postgres(server, { max: 1, onnotice: () => {} });
      await admin.unsafe(`drop database if exists ${name} with (force)`);
      await admin.end();
    },
  };
}

/**
 * A fresh database with every migration applied, for startService() and tests of db/ on their
 * own: a copy of the run's template when tests/run.ts made one, else migrated here (the
 * migrations' object store, a backfill's, is an empty temporary folder, removed once they ran).
 */
export async function migratedDatabase(): Promise<FreshDatabase> {
  const template = Deno.env.get(TEMPLATE_ENV);
  if (template) return await freshDatabase(serverUrl(), template);
  const db = await freshDatabase();
  await migrateEmpty(db.sql);
  return db;
}

async function migrateEmpty(sql: Sql) {
  const dir = await Deno.makeTempDir();
  try {
    await migrate(sql, new FsStore(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * Makes run `id`'s template on `server`: a migrated database that migratedDatabase() copies
 * (CREATE DATABASE … TEMPLATE) instead of running every migration on each new database. Returns
 * the environment that names it to the test processes. No connection to it stays open: a database
 * is copied only while none is.
 */
export async function createRunTemplate(
  server: string,
  id: string,
): Promise<{ name: string; env: Record<string, string> }> {
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  const name = `t_${id}_template`;
  try {
    await admin.unsafe(`create database ${name}`);
  } finally {
    await admin.end();
  }
  const u = new URL(server);
  u.pathname = `/${name}`;
  const sql = createSql(u.toString(), { bounded: false });
  try {
    await migrateEmpty(sql);
  } finally {
    await sql.end({ timeout: 5 });
  }
  return { name, env: { [TEMPLATE_ENV]: name } };
}

/** An image row as an upload of a 3x2 PNG would insert it (db/images.ts insertImage). */
export const imageRow = (shortId: string, hash: string): NewImage => ({
  shortId,
  hash,
  contentType: "image/png",
  sizeBytes: 1234,
  width: 3,
  height: 2,
  thumbnailKey: `thumbnails/${shortId}.webp`,
});

/** A new run id and the environment that hands it to the test processes. */
export function newTestRun(): { id: string; env: Record<string, string> } {
  const id = crypto.randomUUID().replaceAll("-", "").slice(0, 8);
  return { id, env: { [RUN_ID_ENV]: id } };
}

/**
 * Drops every database of run `id` still on the server at `url`: those of a file whose cleanup
 * never ran (it was stopped half-way or killed). Other runs on the same server keep theirs. Says
 * what it dropped; a failure is a warning, never the run's outcome.
 */
export async function dropRunDatabases(url: string, id: string): Promise<void> {
  const admin = postgres(url, { max: 1, onnotice: () => {}, connect_timeout: 10 });
  try {
    // `_` is a LIKE wildcard; the id is hex.
    const rows = await admin<{ datname: string }[]>`
      select datname from pg_database where datname like ${`t\\_${id}\\_%`}`;
    for (const { datname } of rows) {
      await admin.unsafe(`drop database if exists "${datname}" with (force)`);
    }
    // The template (createRunTemplate) is the run's own, never left behind by a file.
    const left = rows.map((r) => r.datname).filter((name) => name !== `t_${id}_template`);
    if (left.length) {
      console.log(`tests: dropped ${left.length} database(s) left behind: ${left.join(" ")}`);
    }
  } catch (e) {
    console.warn(`tests: could not drop this run's databases (t_${id}_*): ${e}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}
