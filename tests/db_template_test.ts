/**
 * db/template.ts: statements rendered as postgres.js renders them (each slot occurrence its own
 * `$n`, in order, nested pieces inline), kept per shape and given each call's values, and the
 * same rows as postgres.js's own fragments from a real PostgreSQL.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { Piece, q, raw, render, Slot, StatementCache, viaSql } from "../db/template.ts";
import { COLUMNS } from "../db/images.ts";
import { meantTagIds } from "../db/tags.ts";
import { freshDatabase } from "./_harness/db.ts";
import { sentStatement } from "./_harness/plans.ts";

const a = new Slot("a");
const b = new Slot("b");

Deno.test("render numbers every slot occurrence in order, nested pieces and raw text inline", () => {
  const inner = q`x = ${b} and y < ${a}`;
  const { text, slots } = render(q`select ${raw("1")} where ${a} > 0 and (${inner}) limit ${b}`);
  assert.equal(text, "select 1 where $1 > 0 and (x = $2 and y < $3) limit $4");
  assert.deepEqual(slots.map((s) => s.name), ["a", "b", "a", "b"]);
});

Deno.test("a piece takes pieces, raw text and slots, never a value", () => {
  assert.throws(() => q`select ${42 as unknown as Slot}`, TypeError);
  assert.throws(() => q`select ${"x" as unknown as Slot}`, TypeError);
  assert.ok(q`select ${q``}` instanceof Piece);
});

Deno.test("a shared postgres.js fragment function renders through q, slots and all", () => {
  const names = new Slot("names");
  const { text, slots } = render(viaSql((sql) => meantTagIds(sql, names as unknown as string[])));
  assert.match(text, /unnest\(\$1::text\[\]\)/);
  assert.deepEqual(slots, [names]);
  assert.match(render(viaSql(COLUMNS)).text, /i\.short_id/);
  // A function that does not build with the tag it is given (a value, a query of its own).
  assert.throws(() => viaSql(() => "select 1"), TypeError);
});

Deno.test("the cache builds a shape once and gives each call its own values", () => {
  let builds = 0;
  const cache = new StatementCache<string, "a" | "b">(() => {
    builds++;
    return q`select ${a}, ${b}, ${a}`;
  }, 2);
  assert.deepEqual(cache.get("s", { a: 1, b: 2 }), {
    text: "select $1, $2, $3",
    params: [1, 2, 1],
  });
  assert.deepEqual(cache.get("s", { a: 7, b: [8] }).params, [7, [8], 7]);
  assert.equal(builds, 1);
  // Bounded: a third shape drops the oldest, which is built again when it comes back.
  cache.get("t", { a: 0, b: 0 });
  cache.get("u", { a: 0, b: 0 });
  assert.equal(cache.size, 2);
  cache.get("s", { a: 0, b: 0 });
  assert.equal(builds, 4);
});

Deno.test("the rendered text is postgres.js's own for the same fragments, and finds the same rows", async () => {
  const db = await freshDatabase();
  try {
    await db.sql`create table t (id int, name text)`;
    await db.sql`insert into t values (1, 'one'), (2, 'two'), (3, 'three')`;
    const ids = [1, 3];
    const name = "three";
    const theirs = await sentStatement(db.url, async (sql) => {
      const where = sql`id = any(${ids}::int[]) and name <> ${name}`;
      await sql`select id from t where ${where} order by id limit ${2}`;
    }, /from t/);
    const ours = render(
      q`select id from t where ${q`id = any(${new Slot("ids")}::int[]) and name <> ${new Slot(
        "name",
      )}`} order by id limit ${new Slot("limit")}`,
    );
    assert.equal(ours.text, theirs.query);
    const sql = postgres(db.url, { max: 1, onnotice: () => {} });
    try {
      const rows = await sql.unsafe(ours.text, [ids, name, 2], { prepare: true });
      assert.deepEqual(rows.map((r) => r.id), [1]);
    } finally {
      await sql.end();
    }
  } finally {
    await db.drop();
  }
});
