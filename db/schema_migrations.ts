/**
 * The migrations' bookkeeping in PostgreSQL: an advisory lock that serialises migrators (replicas
 * starting together apply each revision exactly once), the `schema_migrations` table of applied
 * versions, and a SQL revision applied with its record in one transaction. The order of the
 * revisions and the step between 003 and 004 are services/migrate.ts's.
 */
import type { Sql } from "./client.ts";

/** Arbitrary but fixed key of the advisory lock that serialises migrators. */
const LOCK_KEY = 0x1a9e_b0a2;

/** One connection holding the migrators' lock, until `release`. */
export interface MigrationLock {
  /** The versions recorded as applied when the lock was taken. */
  applied: Set<string>;
  /** Runs a SQL revision and records `version`, in one transaction. */
  applySql(version: string, text: string): Promise<void>;
  /** Records `version` as applied (a step that managed its own transactions). */
  record(version: string): Promise<void>;
  /** Unlocks and gives the connection back; never throws. */
  release(): Promise<void>;
}

/**
 * Waits for the migrators' lock on a connection of its own, without the statement timeout of the
 * service's pool: a revision on a large table, or the wait for another replica's migrations, may
 * take minutes.
 */
export async function lockMigrations(sql: Sql): Promise<MigrationLock> {
  const lock = await sql.reserve();
  const release = async () => {
    await lock`select pg_advisory_unlock(${LOCK_KEY})`.catch(() => {});
    await lock`reset statement_timeout`.catch(() => {});
    lock.release();
  };
  try {
    await lock`set statement_timeout = 0`;
    await lock`select pg_advisory_lock(${LOCK_KEY})`;
    await lock`create table if not exists schema_migrations (
      version text primary key, applied_at timestamptz not null default now())`;
    const rows = await lock<{ version: string }[]>`select version from schema_migrations`;
    return {
      applied: new Set(rows.map((r) => r.version)),
      applySql: async (version, text) => {
        await lock`begin`;
        try {
          await lock.unsafe(text);
          await lock`insert into schema_migrations (version) values (${version})`;
          await lock`commit`;
        } catch (e) {
          await lock`rollback`.catch(() => {});
          throw e;
        }
      },
      record: async (version) => {
        await lock`insert into schema_migrations (version) values (${version})`;
      },
      release,
    };
  } catch (e) {
    await release();
    throw e;
  }
}
