/** Invites (migration 015): a code an admin hands out, good for one account until it expires. */
import type postgres from "postgres";
import type { Role } from "../domain/accounts.ts";
import type { Sql } from "./client.ts";

type Db = Sql | postgres.TransactionSql;

/** An open invite. */
export interface InviteRow {
  code: string;
  role: Role;
  created_at: Date;
  expires_at: Date;
}

/** Inserts an invite valid for `hours`. */
export async function insertInvite(
  tx: Db,
  invite: { code: string; role: Role; hours: number; createdBy: string },
): Promise<InviteRow> {
  const [row] = await tx<InviteRow[]>`
    insert into invites (code, role, created_by, expires_at)
    values (${invite.code}, ${invite.role}, ${invite.createdBy},
            now() + make_interval(hours => ${invite.hours}))
    returning code, role, created_at, expires_at`;
  return row;
}

/** Invites not used and not expired, newest first. */
export async function listOpenInvites(sql: Db): Promise<InviteRow[]> {
  return await sql<InviteRow[]>`
    select code, role, created_at, expires_at from invites
    where used_at is null and expires_at > now() order by created_at desc`;
}

/** Withdraws an unused invite; false when there is no such unused invite. */
export async function deleteInvite(tx: Db, code: string): Promise<boolean> {
  const rows = await tx`delete from invites where code = ${code} and used_at is null returning 1`;
  return rows.length > 0;
}

/** The state of an invite being accepted, its row locked until the transaction ends. */
export type InviteClaim =
  | { state: "unknown" }
  | { state: "used" }
  | { state: "expired" }
  | { state: "open"; role: Role };

/** Locks invite `code` for acceptance and says whether it can be used. */
export async function lockInvite(tx: postgres.TransactionSql, code: string): Promise<InviteClaim> {
  const [row] = await tx<{ role: Role; used: boolean; expired: boolean }[]>`
    select role, used_at is not null as used, expires_at <= now() as expired
    from invites where code = ${code} for update`;
  if (!row) return { state: "unknown" };
  if (row.used) return { state: "used" };
  if (row.expired) return { state: "expired" };
  return { state: "open", role: row.role };
}

/** Marks invite `code` used by account `userId`. */
export async function markInviteUsed(tx: Db, code: string, userId: string): Promise<void> {
  await tx`update invites set used_at = now(), used_by = ${userId} where code = ${code}`;
}
