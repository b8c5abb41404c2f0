/**
 * Plans of the statements the service sends: the statement as postgres.js sent it, and what
 * PostgreSQL makes of it under given settings.
 */
import postgres from "postgres";

/** A statement as postgres.js sent it. */
export interface SentStatement {
  query: string;
  params: unknown[];
}

/**
 * Every statement that `run` sends through a one-connection client of its own on `url`, with
 * these server `settings` for its connection, in order.
 */
export async function sentStatements(
  url: string,
  run: (sql: postgres.Sql) => Promise<unknown>,
  settings: Record<string, string> = {},
): Promise<SentStatement[]> {
  const sent: SentStatement[] = [];
  const traced = postgres(url, {
    max: 1,
    onnotice: () => {},
    connection: settings,
    debug: (_c, query, params) => sent.push({ query, params: params as unknown[] }),
  });
  try {
    await run(traced);
  } finally {
    await traced.end();
  }
  return sent;
}

/**
 * The statement matching `pattern` that `run` sends through a one-connection client of its own
 * on `url` (the last one, when it sends several).
 */
export async function sentStatement(
  url: string,
  run: (sql: postgres.Sql) => Promise<unknown>,
  pattern: RegExp,
): Promise<SentStatement> {
  const found = (await sentStatements(url, run)).findLast((s) => pattern.test(s.query));
  if (!found) throw new Error(`no statement matching ${pattern} was sent`);
  return found;
}

/** EXPLAIN of `statement` on `sql`, in a transaction with `settings` set for it alone. */
export async function explainWith(
  sql: postgres.Sql,
  statement: SentStatement,
  settings: Record<string, string> = {},
): Promise<string> {
  const results = await sql.begin((tx) => [
    ...Object.entries(settings).map(([name, value]) =>
      tx`select set_config(${name}, ${value}, true)`
    ),
    tx.unsafe(`explain ${statement.query}`, statement.params as never[]),
  ]);
  return (results.at(-1) as unknown as { "QUERY PLAN": string }[]).map((r) => r["QUERY PLAN"])
    .join("\n");
}
