/**
 * Personal API keys (migration 015): stored as the SHA-256 hex of the key, looked up by it. A
 * revoked key keeps its row (revoked_at) so that the audit log's names stay meaningful.
 */
import type postgres from "postgres";
import type { Role, Scope } from "../domain/accounts.ts";
import type { Sql } from "./client.ts";

type Db = Sql | postgres.TransactionSql;

/** A key as its owner lists it. */
export interface ApiKeyRow {
  id: string;
  name: string;
  scopes: Scope[];
  created_at: Date;
  last_used_at: Date | null;
}

const KEY = (sql: Db) => sql`id::text as id, name, scopes, created_at, last_used_at`;

/** Inserts a key of account `userId`. */
export async function insertApiKey(
  tx: Db,
  key: { userId: string; name: string; hash: string; scopes: Scope[] },
): Promise<ApiKeyRow> {
  const [row] = await tx<ApiKeyRow[]>`
    insert into api_keys (user_id, name, key_hash, scopes)
    values (${key.userId}, ${key.name}, ${key.hash}, ${key.scopes}::text[])
    returning ${KEY(tx)}`;
  return row;
}

/** Live keys of account `userId`, oldest first. */
export async function listApiKeys(sql: Db, userId: string): Promise<ApiKeyRow[]> {
  return await sql<ApiKeyRow[]>`
    select ${KEY(sql)} from api_keys where user_id = ${userId} and revoked_at is null
    order by api_keys.id`; // the column, not the text of the select list
}

/** Revokes key `id` of account `userId`; its name, or null when there is no such live key. */
export async function revokeApiKey(tx: Db, userId: string, id: string): Promise<string | null> {
  if (!/^\d{1,18}$/.test(id)) return null;
  const [row] = await tx<{ name: string }[]>`
    update api_keys set revoked_at = now()
    where id = ${id} and user_id = ${userId} and revoked_at is null returning name`;
  return row?.name ?? null;
}

/** The owner of a live key and the key, by its hash: what a request with it acts as. */
export interface KeyOwnerRow {
  key_id: string;
  key_name: string;
  scopes: Scope[];
  user_id: string;
  username: string;
  role: Role;
  disabled: boolean;
  last_used_at: Date | null;
}

/** The live key with this hash and its owner, or null (one lookup by the unique hash). */
export async function getKeyOwner(sql: Db, hash: string): Promise<KeyOwnerRow | null> {
  const [row] = await sql<KeyOwnerRow[]>`
    select k.id::text as key_id, k.name as key_name, k.scopes, u.id::text as user_id,
           u.username, u.role, u.disabled, k.last_used_at
    from api_keys k join users u on u.id = k.user_id
    where k.key_hash = ${hash} and k.revoked_at is null`;
  return row ?? null;
}

/** Records that key `id` was used now. */
export async function touchApiKey(sql: Db, id: string): Promise<void> {
  await sql`update api_keys set last_used_at = now() where id = ${id}`;
}
