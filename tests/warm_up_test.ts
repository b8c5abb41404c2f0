/**
 * The upload path's warm-up at start: it prepares the statements an upload runs before its
 * insert, reaches the store, gives up on a store that never answers (start-up goes on), and the
 * real entry runs it before it listens.
 */
import assert from "node:assert/strict";
import { createSql } from "../db/client.ts";
import { warmUploadPath } from "../services/upload/warm_up.ts";
import { childEnv, spawnService, startArgs } from "./_harness/child.ts";
import { freshDatabase } from "./_harness/db.ts";
import { migrate } from "../services/migrate.ts";
import { disposeS3, s3rverBucket, startS3 } from "./_harness/s3.ts";

const db = await freshDatabase();
const s3 = await startS3();
await migrate(db.sql, s3.store);

Deno.test.afterAll(async () => {
  await disposeS3(s3);
  await db.drop();
});

Deno.test("warmUploadPath() prepares the upload's statements and reaches the store", async () => {
  // One connection, so the prepared statements it lists are the ones the warm-up made.
  const sql = createSql(db.url, { max: 1 });
  let checks = 0;
  const store = { check: () => (checks++, s3.store.check()) } as unknown as typeof s3.store;
  try {
    const prepared = () =>
      sql<{ statement: string }[]>`select statement from pg_prepared_statements`.then((rows) =>
        rows.map((r) => r.statement).join("\n")
      );
    assert.doesNotMatch(await prepared(), /from images where hash/);
    const report = await warmUploadPath({ sql, store });
    assert.equal(report.database, true);
    assert.equal(report.storage, true);
    assert.equal(checks, 1);
    const statements = await prepared();
    assert.match(statements, /select 1 from images where hash = \$1/);
    assert.match(statements, /insert into pending_deletes/);
    assert.match(statements, /delete from pending_deletes where key = any/);
    // It wrote nothing.
    const [{ n }] = await sql`select count(*)::int as n from pending_deletes`;
    assert.equal(n, 0);
  } finally {
    await sql.end();
  }
});

Deno.test("warmUploadPath() gives up on a store that never answers, and start-up goes on", async () => {
  // Accepts connections and never answers.
  const silent = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const held: Deno.Conn[] = [];
  const accepting = (async () => {
    for await (const conn of silent) held.push(conn);
  })();
  const { store } = s3rverBucket((silent.addr as Deno.NetAddr).port, "board", 60_000);
  const sql = createSql(db.url, { max: 1 });
  try {
    const report = await warmUploadPath({ sql, store });
    assert.equal(report.storage, false);
    assert.equal(report.database, true);
  } finally {
    await sql.end();
    silent.close();
    await accepting.catch(() => {});
    for (const conn of held) conn.close();
  }
});

Deno.test("the service warms the upload path up before it listens", async () => {
  const lines: string[] = [];
  const child = await spawnService(
    await startArgs(),
    childEnv(db, s3, { LOG_LEVEL: "info" }),
    { onLine: (line) => lines.push(line) },
  );
  try {
    const warm = lines.map((l) => l.startsWith("{") ? JSON.parse(l) : null)
      .find((l) => l?.msg === "upload path warmed up");
    assert.ok(warm, child.output());
    // Whether each part finished within its bound depends on the machine's load; that it ran
    // before the service listened does not.
    assert.equal(typeof warm.storage, "boolean");
    assert.equal(typeof warm.database, "boolean");
  } finally {
    await child.stop();
  }
});
