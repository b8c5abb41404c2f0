import { createSql } from "../db/client.ts";
import { searchImagesByText } from "../db/captions.ts";
const sql = createSql("postgres://postgres@127.0.0.1:5432/bench_1m", { genericPlans: true, max: 1 });
const [w, t] = [Deno.args[0].split(" "), Deno.args[1] ? [Deno.args[1]] : []];
for (let i = 0; i < 8; i++) { const s = performance.now(); await searchImagesByText(sql, { words: w, tags: t, exclude: [], limit: 51, after: null }); console.log((performance.now() - s).toFixed(1)); }
await sql.unsafe("load 'auto_explain'");
await sql.unsafe("set auto_explain.log_min_duration = 0");
await sql.unsafe("set auto_explain.log_analyze = on");
await sql.unsafe("set auto_explain.log_timing = on");
await searchImagesByText(sql, { words: w, tags: t, exclude: [], limit: 51, after: null });
await sql.end();
