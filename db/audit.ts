/**
 * The audit log (migration 015): who changed what, newest first by `id` (the primary key's index
 * read backwards pages it). `detail` holds names and counts, never a password, key, token or hash
 * (services/audit.ts builds every entry).
 */
import type postgres from "postgres";
import type { Sql } from "./client.ts";

type Db = Sql | postgres.TransactionSql;

/** One entry to record. */
export interface AuditEntry {
  actor: string;
  via: string | null;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
}

/** An entry as read back. */
export interface AuditRow extends AuditEntry {
  id: string;
  at: Date;
}

/** Appends `entry` (inside the caller's transaction when given one). */
export async function insertAudit(sql: Db, entry: AuditEntry): Promise<void> {
  await sql`
    insert into audit_log (actor, via, action, target, detail)
    values (${entry.actor}, ${entry.via}, ${entry.action}, ${entry.target},
            ${sql.json(entry.detail as postgres.JSONValue)})`;
}

/** Up to `limit` entries with an ID below `beforeId` (all when null), newest first. */
export async function listAudit(
  sql: Db,
  beforeId: string | null,
  limit: number,
): Promise<AuditRow[]> {
  return await sql<AuditRow[]>`
    select id::text as id, at, actor, via, action, target, detail from audit_log
    where id < coalesce(${beforeId}::bigint, 9223372036854775807)
    order by audit_log.id desc limit ${limit}`; // the column: `id` alone is the text above
}
