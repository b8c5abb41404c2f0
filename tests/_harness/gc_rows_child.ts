/**
 * The child of gc_survival.ts: GC_QUERIES queries on GC_DATABASE_URL through the service's client,
 * one at a time, each returning GC_ROWS rows of three integers; prints nothing of its own.
 */
import { createSql } from "../../db/client.ts";

const env = (name: string) => Deno.env.get(name) ?? "";
const sql = createSql(env("GC_DATABASE_URL"), { max: 1 });
const rows = Number(env("GC_ROWS"));
for (let i = 0; i < Number(env("GC_QUERIES")); i++) {
  const page = await sql`
    select g as id, g * 2 as width, g * 3 as height from generate_series(1, ${rows}::int) g`;
  if (page.length !== rows) throw new Error(`${page.length} rows, not ${rows}`);
}
await sql.end();
