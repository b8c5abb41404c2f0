/**
 * Accounts (migration 015). Usernames are unique regardless of case (an index on
 * `lower(username)`); getters return null when nothing is found. SQL only: the rules are in
 * domain/accounts.ts and the use cases in services/accounts.ts.
 */
import type postgres from "postgres";
import type { Role } from "../domain/accounts.ts";
import type { Sql } from "./client.ts";

type Db = Sql | postgres.TransactionSql;

/** An account as the service reads it to authenticate. */
export interface UserRow {
  id: string;
  username: string;
  role: Role;
  disabled: boolean;
  token_generation: number;
  password_hash: string | null;
  created_at: Date;
}

const USER = (sql: Db) =>
  sql`id::text as id, username, role, disabled, token_generation, password_hash, created_at`;

/**
 * The configured admin's row, made (or made an enabled admin again) when missing: it has no
 * password hash, since its password is the configuration's.
 */
export async function ensureConfiguredAdmin(sql: Sql, username: string): Promise<UserRow> {
  const [row] = await sql<UserRow[]>`
    insert into users (username, role) values (${username}, 'admin')
    on conflict ((lower(username))) do update set role = 'admin', disabled = false
    returning ${USER(sql)}`;
  return row;
}

/** The account named `username` (any case), or null. */
export async function getUserByName(sql: Db, username: string): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`
    select ${USER(sql)} from users where lower(username) = lower(${username})`;
  return row ?? null;
}

/** Inserts an account; null when the name is taken (in any case). */
export async function insertUser(
  sql: Db,
  user: { username: string; passwordHash: string; role: Role },
): Promise<UserRow | null> {
  const [row] = await sql<UserRow[]>`
    insert into users (username, password_hash, role)
    values (${user.username}, ${user.passwordHash}, ${user.role})
    on conflict ((lower(username))) do nothing
    returning ${USER(sql)}`;
  return row ?? null;
}

/** An account as `GET /users` lists it. */
export interface UserListing {
  username: string;
  role: Role;
  disabled: boolean;
  created_at: Date;
  uploads: number;
}

/**
 * Every account, oldest first, with its number of uploads. The count is read per account from
 * images (uploaded_by, seq): an admin's page, not a per-request path of the board.
 */
export async function listUsers(sql: Sql): Promise<UserListing[]> {
  return await sql<UserListing[]>`
    select u.username, u.role, u.disabled, u.created_at,
           (select count(*) from images i where i.uploaded_by = u.id)::int as uploads
    from users u order by u.id`;
}

/**
 * Changes an account's role and/or disabled flag; disabling also bumps its token generation (every
 * token it holds stops). Returns the row before and after, or null when there is no such account.
 */
export async function updateUser(
  tx: postgres.TransactionSql,
  username: string,
  change: { role?: Role; disabled?: boolean },
): Promise<{ before: UserRow; after: UserRow } | null> {
  const [before] = await tx<UserRow[]>`
    select ${USER(tx)} from users where lower(username) = lower(${username}) for update`;
  if (!before) return null;
  const role = change.role ?? before.role;
  const disabled = change.disabled ?? before.disabled;
  const bump = disabled && !before.disabled ? 1 : 0;
  const [after] = await tx<UserRow[]>`
    update users set role = ${role}, disabled = ${disabled},
      token_generation = token_generation + ${bump}
    where id = ${before.id} returning ${USER(tx)}`;
  return { before, after };
}

/** Stores a new password hash for account `id`. */
export async function setPasswordHash(tx: Db, id: string, hash: string): Promise<void> {
  await tx`update users set password_hash = ${hash} where id = ${id}`;
}

/** Bumps account `id`'s token generation: every token issued before stops. */
export async function bumpTokenGeneration(tx: Db, id: string): Promise<void> {
  await tx`update users set token_generation = token_generation + 1 where id = ${id}`;
}

/** The account ID of `username` (any case), or null: restore's attribution. */
export async function userIdByName(sql: Db, username: string): Promise<string | null> {
  const [row] = await sql<{ id: string }[]>`
    select id::text as id from users where lower(username) = lower(${username})`;
  return row?.id ?? null;
}

/**
 * Who uploaded image `shortId`: the account ID, null for nobody known, or undefined when there is
 * no such image (the route then answers its own 404).
 */
export async function getImageUploaderId(
  sql: Db,
  shortId: string,
): Promise<string | null | undefined> {
  const [row] = await sql<{ uploaded_by: string | null }[]>`
    select uploaded_by::text as uploaded_by from images where short_id = ${shortId}`;
  return row ? row.uploaded_by : undefined;
}
