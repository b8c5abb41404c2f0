/**
 * The benchmarks' PostgreSQL server: its databases, fresh ones, and reading one into the file
 * cache.
 *
 * @module
 */
import postgres from "postgres";

/** The PostgreSQL server of the benchmarks. */
export function benchServerUrl(): string {
  return Deno.env.get("BENCH_DATABASE_URL") ?? "postgres://postgres@127.0.0.1:5432/postgres";
}

/** The URL of database `name` on the bench server. */
export function databaseUrl(name: string): string {
  const u = new URL(benchServerUrl());
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * Reads every table and index of database `url` into the operating system's file cache
 * (pg_prewarm, `read` mode), and returns how many MB that was. A board in use keeps the pages its
 * requests read in that cache; a benchmark that follows others may not: these machines reclaim
 * memory nobody touched for seconds (DAMON's `pageout` scheme, `/sys/kernel/mm/damon`), and after
 * three minutes of other benchmarks B10's caption searches read the caption tables from disk
 * (16-24 searches a second with a tag, p99 1.7-3.2 s, against 330-420 and 62-146 ms warm).
 */
export async function prewarm(url: string): Promise<number> {
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`create extension if not exists pg_prewarm`;
    const [{ mb }] = await sql<{ mb: number }[]>`
      select (sum(pg_prewarm(c.oid, 'read')) * current_setting('block_size')::int / 1e6)::int as mb
      from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where n.nspname = 'public' and c.relkind in ('r', 'i', 't', 'm')`;
    return mb;
  } finally {
    await sql.end({ timeout: 2 });
  }
}

/** Runs `fn` on an admin connection to the server's default database. */
export async function withAdmin<T>(fn: (sql: postgres.Sql) => Promise<T>): Promise<T> {
  const admin = postgres(benchServerUrl(), { max: 1, onnotice: () => {} });
  try {
    return await fn(admin);
  } finally {
    await admin.end({ timeout: 2 });
  }
}

/** A fresh, empty database `bench_<random>`; `drop()` removes it. */
export async function freshBenchDatabase(): Promise<
  { name: string; url: string; drop(): Promise<void> }
> {
  const name = `bench_${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  await withAdmin((sql) => sql.unsafe(`create database ${name}`));
  return {
    name,
    url: databaseUrl(name),
    drop: async () => {
      await withAdmin((sql) => sql.unsafe(`drop database if exists ${name} with (force)`));
    },
  };
}
