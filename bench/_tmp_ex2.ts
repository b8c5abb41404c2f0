import { createSql } from "../db/client.ts";
import { searchImagesByText } from "../db/captions.ts";
const sql = createSql("postgres://postgres@127.0.0.1:5432/bench_1m", { genericPlans: true, max: 1 });
const [w, t] = [Deno.args[0].split(" "), Deno.args[1] ? [Deno.args[1]] : []];
for (let i = 0; i < 4; i++) await searchImagesByText(sql, { words: w, tags: t, exclude: [], limit: 51, after: null });
await sql.unsafe("set log_min_duration_statement = 0");
for (let i = 0; i < 2; i++) { const s = performance.now(); await searchImagesByText(sql, { words: w, tags: t, exclude: [], limit: 51, after: null }); console.log((performance.now() - s).toFixed(1)); }
await sql.end();
