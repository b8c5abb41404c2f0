import assert from "node:assert/strict";
import { createSql } from "../db/client.ts";
import { serverUrl } from "./_harness/db.ts";

Deno.test("the service's connections run with JIT off and name themselves", async () => {
  const sql = createSql(serverUrl());
  try {
    const [{ jit, app }] = await sql<{ jit: string; app: string }[]>`
      select current_setting('jit') as jit, current_setting('application_name') as app`;
    assert.equal(jit, "off");
    assert.equal(app, "reaction-board");
  } finally {
    await sql.end();
  }
});
