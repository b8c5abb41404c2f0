/** A fresh PostgreSQL database per test file, on the server the run resolved. */
import postgres from "postgres";
import { createSql, type Sql } from "../../db/client.ts";

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

/** Creates an empty database with a random name on the test server (or on `server`). */
export async function freshDatabase(server = serverUrl()): Promise<FreshDatabase> {
  const name = `t_${crypto.randomUUID().replaceAll("-", "").slice(0, 20)}`;
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
