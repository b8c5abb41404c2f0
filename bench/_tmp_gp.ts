import postgres from "postgres";
import { createSql } from "../db/client.ts";
import { suggestTags } from "../db/tags.ts";
const url = "postgres://postgres@127.0.0.1:5432/bench_1m";
const a = createSql(url);
const b = postgres(url, {
  max: 10,
  connection: { plan_cache_mode: "force_generic_plan", jit: "off" },
});
async function run(name: string, fn: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 500; i++) await fn(i);
  const t = performance.now();
  let n = 0;
  await Promise.all(Array.from({ length: 8 }, async () => {
    while (n < 8000) await fn(n++);
  }));
  const ms = performance.now() - t;
  console.log(name, (8000 / ms * 1000).toFixed(0), "calls/s");
}
for (let k = 0; k < 2; k++) {
  for (const text of ["t", "x", "t12"]) {
    await run("tx+set " + text, (i) => suggestTags(a, text + (i % 300), 10));
    await run("startup " + text, (i) => suggestTags(b, text + (i % 300), 10));
  }
}
await a.end();
await b.end();
