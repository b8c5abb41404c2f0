/**
 * Diagnostic: how much of what the young generation allocates survives V8's scavenges while
 * queries return rows through postgres.js, one at a time (no concurrency: nothing else is in
 * flight). Respawns itself under `--v8-flags=--trace-gc-nvp` and reads V8's own per-GC figures.
 *
 *   deno run -A bench/_gc_survival.ts [rows|one] [queries]
 *
 * `rows` reads 51 rows of three integers a query (the shape of a listing page), `one` a single
 * `select 1`. Needs `bench_1m` (`deno task bench:seed`); BENCH_DATABASE_URL overrides it.
 */
import postgres from "postgres";
import { databaseUrl } from "./_lib.ts";
import { SEED_DB } from "./seed.ts";

const [shape = "rows", count = "20000"] = Deno.args;

if (Deno.env.get("GC_SURVIVAL_CHILD") !== "1") {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--v8-flags=--trace-gc-nvp",
      new URL(import.meta.url).pathname,
      shape,
      count,
    ],
    env: { GC_SURVIVAL_CHILD: "1" },
    stdout: "piped",
    stderr: "inherit",
  }).output();
  const gcs = new TextDecoder().decode(out.stdout).split("\n")
    .map((line) => line.slice(line.indexOf('{"pause"')))
    .filter((line) => line.startsWith('{"pause"'))
    .map((line) => JSON.parse(line) as Record<string, number | string>);
  const scavenges = gcs.filter((g) => g.gc === "s");
  const sum = (key: string) => scavenges.reduce((a, g) => a + Number(g[key] ?? 0), 0);
  const survived = sum("new_space_survived") + sum("promoted");
  console.log(
    `${shape}, ${count} queries: ${scavenges.length} scavenges, ${
      (sum("allocated") / 1e6).toFixed(0)
    } MB allocated, ${(100 * survived / sum("allocated")).toFixed(1)}% of it survived, pauses ${
      sum("pause").toFixed(0)
    } ms (longest ${Math.max(...scavenges.map((g) => Number(g.pause))).toFixed(1)}); ${
      gcs.filter((g) => g.gc === "mc").length
    } mark-compacts`,
  );
} else {
  const sql = postgres(Deno.env.get("BENCH_DATABASE_URL") ?? databaseUrl(SEED_DB), { max: 1 });
  for (let i = 0; i < Number(count); i++) {
    if (shape === "one") await sql`select 1`;
    else await sql`select id, width, height from images order by images.seq desc limit 51`;
  }
  await sql.end();
}
