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

/** Creates an empty database, named `t_<run id>_…`, on the test server (or on `server`). */
export async function freshDatabase(server = serverUrl()): Promise<FreshDatabase> {
  const run = Deno.env.get(RUN_ID_ENV);
  const name = `t_${run ? `${run}_` : ""}${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
  const admin = postgres(server, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database ${name}`);
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
 * A fresh database with every migration applied, for tests of db/ on their own. The migrations'
 * object store (a backfill's) is an empty temporary folder, removed once they ran.
 */
export async function migratedDatabase(): Promise<FreshDatabase> {
  const db = await freshDatabase();
  const dir = await Deno.makeTempDir();
  try {
    await migrate(db.sql, new FsStore(dir));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
  return db;
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
    if (rows.length) {
      console.log(
        `tests: dropped ${rows.length} database(s) left behind: ${
          rows.map((r) => r.datname).join(" ")
        }`,
      );
    }
  } catch (e) {
    console.warn(`tests: could not drop this run's databases (t_${id}_*): ${e}`);
  } finally {
    await admin.end({ timeout: 5 });
  }
}
