import postgres from "postgres";
import { createSql } from "../db/client.ts";
import { searchImagesByText } from "../db/captions.ts";
import { queryWords } from "../lib/text/caption_text.ts";
import { random, zipf } from "./_lib.ts";
import { TAGS } from "./seed.ts";
import { captionWord, WORDS } from "./seed_captions.ts";
const url = "postgres://postgres@127.0.0.1:5432/bench_1m";
const sql = createSql(url, { genericPlans: true, max: 1 });
const raw = postgres(url, { max: 1 });
const phrases = (await raw<{ text: string }[]>`
    select text from images tablesample system (0.2) repeatable (7) where text like '% %' limit 3000`)
    .map((r) => r.text.toLowerCase().split(" ").slice(0, 2).join(" "));
const r = random(42);
const draws = Array.from({ length: 8000 }, () => [r(), r(), r()]);
const word = (i: number) => captionWord(zipf(draws[i % draws.length][0], WORDS));
const shapes: Record<string, (i: number) => { q: string; tags: string[] }> = {
  one: (i) => ({ q: word(i), tags: [] }),
  wordtag: (i) => ({ q: word(i), tags: [`t${zipf(draws[i % draws.length][1], TAGS)}`] }),
  two: (i) => ({ q: phrases[i % phrases.length], tags: [] }),
  slip: (i) => ({ q: word(i).slice(0, -1) + "x", tags: [] }),
};
for (const [name, f] of Object.entries(shapes)) {
  const times: { ms: number; q: string; tags: string[]; n: number }[] = [];
  for (let i = 0; i < 300; i++) {
    const { q, tags } = f(i);
    const t = performance.now();
    const rows = await searchImagesByText(sql, { words: queryWords(q), tags, exclude: [], limit: 51, after: null });
    times.push({ ms: performance.now() - t, q, tags, n: rows.length });
  }
  const s = [...times].sort((a, b) => a.ms - b.ms);
  const pct = (p: number) => s[Math.floor(p * (s.length - 1))].ms.toFixed(1);
  console.log(name, "p50", pct(0.5), "p90", pct(0.9), "p99", pct(0.99), "max", pct(1), "sum", s.reduce((a, b) => a + b.ms, 0).toFixed(0));
  for (const x of s.slice(-4)) console.log("   ", x.ms.toFixed(1), JSON.stringify(x.q), x.tags.join(","), x.n);
}
await sql.end(); await raw.end();
