/**
 * A test module that makes a database and never drops it, as a file killed half-way would:
 * cleanup_test.ts runs it to see that the runner drops what a file leaves behind.
 */
import { freshDatabase } from "./_harness/db.ts";

const db = await freshDatabase();
await db.sql.end();
console.log(`left behind: ${db.name}`);

Deno.test("a database is left behind", () => {});
