/**
 * Audit entries: who (`actor`), through which API key (`via`), did what (`action`) to what
 * (`target`). Every entry is built here, from the principal and a few names and counts; nothing
 * secret (password, key, token, hash, invite code) is ever passed in
 * (tests/accounts_audit_test.ts, "nothing secret reaches the audit log").
 */
import type { Principal } from "../domain/accounts.ts";
import { type AuditEntry, insertAudit } from "../db/audit.ts";
import type { Sql } from "../db/client.ts";

/** The entry of `action` on `target` by `p`. */
export function auditEntry(
  p: Principal,
  action: string,
  target: string | null,
  detail: Record<string, unknown> = {},
): AuditEntry {
  return { actor: p.username, via: p.key?.name ?? null, action, target, detail };
}

/**
 * Records `action` after a change that committed on its own (the image and tag writes, whose
 * transactions live in db/images.ts and db/tag_rules.ts).
 */
export async function recordAudit(
  sql: Sql,
  p: Principal,
  action: string,
  target: string | null,
  detail: Record<string, unknown> = {},
): Promise<void> {
  await insertAudit(sql, auditEntry(p, action, target, detail));
}
