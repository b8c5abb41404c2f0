/**
 * Query plans of the service's statements, written to bench/plans/ by the benchmarks so that a
 * plan that changes shows in a diff: tests run on a small database, whose estimates can give
 * another plan than a million images do (the two-tag merge was lost that way for a day).
 *
 * @module
 */
import postgres from "postgres";
import { sentStatements } from "../../tests/_harness/plans.ts";

/** One request whose statements are explained. */
export interface PlanCase {
  name: string;
  path: string;
  /** The same call the read model makes for this request. */
  sql: (sql: postgres.Sql) => Promise<unknown>;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of every statement `c` sends, with a custom plan (these parameters)
 * and the generic plan, on a connection with the service's `settings` for that statement's pool.
 */
export async function explainCase(
  url: string,
  c: PlanCase,
  settings: Record<string, string> = {},
): Promise<string> {
  const genericOnly = settings.plan_cache_mode === "force_generic_plan";
  // The service's session settings (db/client.ts), so the plans are the ones it gets.
  const plain = postgres(url, {
    max: 1,
    onnotice: () => {},
    connection: { jit: "off", ...settings },
  });
  try {
    // With the pool's settings: one that plans generically sends its statements as they are
    // (db/client.ts).
    const captured = await sentStatements(url, c.sql, settings);
    const out = [`# ${c.name}`, `# GET ${c.path}`, ""];
    for (const { query, params } of captured) {
      if (query.includes("pg_catalog.pg_type")) continue; // postgres.js's own type lookup
      out.push("-- query:", query.trim(), `-- parameters: ${JSON.stringify(params)}`, "");
      if (!genericOnly) {
        const rows = await plain.unsafe(
          `explain (analyze, buffers) ${query}`,
          params as postgres.ParameterOrJSON<never>[],
        );
        out.push("-- custom plan (this execution's parameters):");
        out.push(...rows.map((r) => r["QUERY PLAN"] as string), "");
      }
      if (params.length === 0) continue;
      // The service's statements are prepared by postgres.js; after 5 executions PostgreSQL may
      // keep a generic plan. Show that one too.
      const literal = (v: unknown) => `'${String(v).replaceAll("'", "''")}'`;
      await plain.unsafe(`prepare bench_q as ${query}`);
      await plain.unsafe(`set plan_cache_mode = force_generic_plan`);
      const generic = await plain.unsafe(
        `explain (analyze, buffers) execute bench_q(${params.map(literal).join(", ")})`,
      );
      await plain.unsafe(`reset plan_cache_mode`);
      await plain.unsafe(`deallocate bench_q`);
      out.push(
        genericOnly
          ? "-- generic plan (the pool plans every statement so):"
          : "-- generic plan (what a prepared statement may switch to):",
      );
      out.push(...generic.map((r) => r["QUERY PLAN"] as string), "");
    }
    return out.join("\n");
  } finally {
    await plain.end();
  }
}
