/**
 * The use cases of accounts (issue 42): signing in, telling who a bearer value acts as, passwords,
 * sign-out-everywhere, API keys, invites and the admin's user list. Every change of an account,
 * key or invite writes its audit row in the same transaction (services/audit.ts).
 *
 * Who a request acts as is read from the database on every authenticated request: one lookup by a
 * unique index, so a revoked key, a disabled account or a sign-out-everywhere takes effect on the
 * next request on every replica (tests/accounts_test.ts, "revocation takes effect on the next
 * request").
 */
import {
  API_KEY_BYTES,
  API_KEY_PREFIX,
  checkNewPassword,
  isApiKey,
  MAX_API_KEYS,
  parseUsername,
  type Principal,
  type Role,
  type Scope,
} from "../domain/accounts.ts";
import { encodeBase64Url } from "../domain/base64.ts";
import { sha256Hex } from "../domain/hash.ts";
import { AppError } from "../domain/errors.ts";
import {
  type AccessToken,
  credentialsMatch,
  issueAccessToken,
  verifyAccessTokenClaims,
} from "./auth.ts";
import type { Config } from "../adapters/config.ts";
import { type Sql, transaction } from "../db/client.ts";
import {
  bumpTokenGeneration,
  ensureConfiguredAdmin,
  getUserByName,
  insertUser,
  listUsers,
  setPasswordHash,
  updateUser,
  type UserListing,
  type UserRow,
} from "../db/users.ts";
import {
  type ApiKeyRow,
  getKeyOwner,
  insertApiKey,
  listApiKeys,
  revokeApiKey,
  touchApiKey,
} from "../db/api_keys.ts";
import {
  deleteInvite,
  insertInvite,
  type InviteRow,
  listOpenInvites,
  lockInvite,
  markInviteUsed,
} from "../db/invites.ts";
import { insertAudit } from "../db/audit.ts";
import { type PasswordHasher, scryptHasher } from "./passwords.ts";
import { auditEntry } from "./audit.ts";

/** A key's last use is written at most this often (a burst of uploads writes it once). */
const TOUCH_EVERY_MS = 60_000;
/** Random bytes in an invite code. */
const INVITE_BYTES = 18;

const randomText = (bytes: number) =>
  encodeBase64Url(crypto.getRandomValues(new Uint8Array(bytes)));

/** What the accounts service is built on. */
export interface AccountsDeps {
  config: Config;
  sql: Sql;
  /** The password hasher (default: scrypt at OWASP's parameters). */
  passwords?: PasswordHasher;
}

/** The accounts of one service instance. */
export class Accounts {
  readonly #config: Config;
  readonly #sql: Sql;
  readonly #hasher: PasswordHasher;
  #admin: Promise<UserRow> | null = null;

  constructor(deps: AccountsDeps) {
    this.#config = deps.config;
    this.#sql = deps.sql;
    this.#hasher = deps.passwords ?? scryptHasher();
  }

  /**
   * Makes the configured admin's row on first need (the migration cannot know its name); the row
   * as it was then (read it afresh for its token generation).
   */
  configuredAdmin(): Promise<UserRow> {
    this.#admin ??= ensureConfiguredAdmin(this.#sql, this.#config.ADMIN_USERNAME).catch((e) => {
      this.#admin = null;
      throw e;
    });
    return this.#admin;
  }

  /** True when `username` is the configured admin's name (any case). */
  isConfiguredAdmin(username: string): boolean {
    return username.toLowerCase() === this.#config.ADMIN_USERNAME.toLowerCase();
  }

  /** A token for `user`, of its current generation. */
  issue(user: { username: string; token_generation: number }): Promise<AccessToken> {
    return issueAccessToken(this.#config, user.username, Date.now(), user.token_generation);
  }

  /**
   * The account a sign-in names, when the password is its own and it is enabled; else null. The
   * configured admin's name always checks the configured password, in constant time; any other
   * name costs one scrypt verification whether or not it exists. An API key is never a password.
   */
  async signIn(username: string, password: string): Promise<UserRow | null> {
    if (credentialsMatch(this.#config, username, password)) {
      await this.configuredAdmin();
      // Read afresh: its token generation moves with every sign-out-everywhere.
      return await getUserByName(this.#sql, this.#config.ADMIN_USERNAME);
    }
    const user = this.isConfiguredAdmin(username)
      ? null
      : await getUserByName(this.#sql, username.trim());
    if (!user?.password_hash) {
      await this.#hasher.verifyNothing(password);
      return null;
    }
    const ok = await this.#hasher.verify(password, user.password_hash);
    return ok && !user.disabled ? user : null;
  }

  /** Who a bearer value (a token or an API key) acts as, or null when it is not valid now. */
  async authenticate(bearer: string): Promise<Principal | null> {
    if (isApiKey(bearer)) {
      if (bearer.length > 128) return null;
      const row = await getKeyOwner(this.#sql, sha256Hex(bearer));
      if (!row || row.disabled) return null;
      if (!row.last_used_at || Date.now() - row.last_used_at.getTime() > TOUCH_EVERY_MS) {
        await touchApiKey(this.#sql, row.key_id);
      }
      return {
        userId: row.user_id,
        username: row.username,
        role: row.role,
        key: { id: row.key_id, name: row.key_name, scopes: row.scopes },
      };
    }
    const claims = await verifyAccessTokenClaims(this.#config, bearer);
    if (!claims) return null;
    if (this.isConfiguredAdmin(claims.sub)) await this.configuredAdmin();
    const user = await getUserByName(this.#sql, claims.sub);
    if (!user || user.disabled || claims.gen !== user.token_generation) return null;
    return { userId: user.id, username: user.username, role: user.role, key: null };
  }

  /** The signed-in account as `GET /me` answers it. */
  async me(p: Principal) {
    const user = await getUserByName(this.#sql, p.username);
    if (!user) throw new AppError("unauthorized", "Invalid or expired token");
    return { username: user.username, role: user.role, created_at: user.created_at.toISOString() };
  }

  /** Changes `p`'s password: 422 `wrong_password` or `weak_password`, or `configured_admin`. */
  async changePassword(p: Principal, current: string, next: string): Promise<void> {
    if (this.isConfiguredAdmin(p.username)) {
      throw new AppError(
        "configured_admin",
        "The configured admin's password is ADMIN_PASSWORD; change it there",
      );
    }
    const user = await getUserByName(this.#sql, p.username);
    if (!user?.password_hash || !await this.#hasher.verify(current, user.password_hash)) {
      throw new AppError("wrong_password", "current_password: not your password");
    }
    checkNewPassword(next);
    const hash = await this.#hasher.hash(next);
    await transaction(this.#sql, async (tx) => {
      await setPasswordHash(tx, user.id, hash);
      await insertAudit(tx, auditEntry(p, "password.change", p.username));
    });
  }

  /** Ends every token `p`'s account holds (its keys stay: revoke those one by one). */
  async signOutEverywhere(p: Principal): Promise<void> {
    await transaction(this.#sql, async (tx) => {
      await bumpTokenGeneration(tx, p.userId);
      await insertAudit(tx, auditEntry(p, "account.sign_out_everywhere", p.username));
    });
  }

  /** A new key of `p`'s account: the key itself (shown once) and its listing. */
  async createApiKey(p: Principal, name: string, scopes: Scope[]) {
    const key = API_KEY_PREFIX + randomText(API_KEY_BYTES);
    const row = await transaction(this.#sql, async (tx) => {
      const live = await listApiKeys(tx, p.userId);
      if (live.length >= MAX_API_KEYS) {
        throw new AppError("invalid_field", `An account holds at most ${MAX_API_KEYS} keys`);
      }
      const row = await insertApiKey(tx, { userId: p.userId, name, hash: sha256Hex(key), scopes });
      await insertAudit(tx, auditEntry(p, "api_key.create", name, { id: row.id, scopes }));
      return row;
    });
    return { key, row };
  }

  /** `p`'s live keys. */
  listApiKeys(p: Principal): Promise<ApiKeyRow[]> {
    return listApiKeys(this.#sql, p.userId);
  }

  /** Revokes key `id` of `p`'s account; false when it has no such live key. */
  revokeApiKey(p: Principal, id: string): Promise<boolean> {
    return transaction(this.#sql, async (tx) => {
      const name = await revokeApiKey(tx, p.userId, id);
      if (name === null) return false;
      await insertAudit(tx, auditEntry(p, "api_key.revoke", name, { id }));
      return true;
    });
  }

  /** A new invite for `role`, valid `hours`. */
  createInvite(p: Principal, role: Role, hours: number): Promise<InviteRow> {
    const code = randomText(INVITE_BYTES);
    return transaction(this.#sql, async (tx) => {
      const row = await insertInvite(tx, { code, role, hours, createdBy: p.userId });
      await insertAudit(
        tx,
        auditEntry(p, "invite.create", inviteLabel(code), {
          role,
          expires_at: row.expires_at.toISOString(),
        }),
      );
      return row;
    });
  }

  /** Open invites. */
  listInvites(): Promise<InviteRow[]> {
    return listOpenInvites(this.#sql);
  }

  /** Withdraws an unused invite; false when there is none with that code. */
  withdrawInvite(p: Principal, code: string): Promise<boolean> {
    return transaction(this.#sql, async (tx) => {
      if (!await deleteInvite(tx, code)) return false;
      await insertAudit(tx, auditEntry(p, "invite.withdraw", inviteLabel(code)));
      return true;
    });
  }

  /**
   * Creates the account an invite offers and returns it: 404 for an unknown code, 410
   * `invite_used` / `invite_expired`, 409 `username_taken`, 422 for a bad name or password. The
   * invite is checked before the password is hashed, and again under its row lock after.
   */
  async acceptInvite(code: string, rawName: string, password: string): Promise<UserRow> {
    const username = parseUsername(rawName, this.#config.ADMIN_USERNAME);
    checkNewPassword(password);
    await transaction(this.#sql, async (tx) => inviteOrThrow(await lockInvite(tx, code)));
    if (await getUserByName(this.#sql, username)) throw usernameTaken(username);
    const passwordHash = await this.#hasher.hash(password);
    return await transaction(this.#sql, async (tx) => {
      const role = inviteOrThrow(await lockInvite(tx, code));
      const user = await insertUser(tx, { username, passwordHash, role });
      if (!user) throw usernameTaken(username);
      await markInviteUsed(tx, code, user.id);
      const actor: Principal = { userId: user.id, username, role, key: null };
      await insertAudit(
        tx,
        auditEntry(actor, "user.create", username, {
          role,
          invite: inviteLabel(code),
        }),
      );
      return user;
    });
  }

  /** Every account with its number of uploads. */
  listUsers(): Promise<UserListing[]> {
    return this.configuredAdmin().then(() => listUsers(this.#sql));
  }

  /**
   * Changes an account's role or disabled flag (disabling ends its tokens and stops its keys at
   * once); 404 for no such account, 422 `configured_admin` for demoting or disabling that one.
   */
  async updateUser(
    p: Principal,
    username: string,
    change: { role?: Role; disabled?: boolean },
  ): Promise<UserListing> {
    if (
      this.isConfiguredAdmin(username) &&
      ((change.role !== undefined && change.role !== "admin") || change.disabled === true)
    ) {
      throw new AppError(
        "configured_admin",
        "The configured admin (ADMIN_USERNAME) cannot be demoted or disabled",
      );
    }
    const done = await transaction(this.#sql, async (tx) => {
      const done = await updateUser(tx, username, change);
      if (!done) return null;
      const { before, after } = done;
      const detail: Record<string, unknown> = {};
      if (before.role !== after.role) detail.role = { from: before.role, to: after.role };
      if (before.disabled !== after.disabled) detail.disabled = after.disabled;
      await insertAudit(tx, auditEntry(p, "user.update", after.username, detail));
      return after;
    });
    if (!done) throw new AppError("not_found", `There is no user "${username}"`);
    const listed = (await listUsers(this.#sql)).find((u) => u.username === done.username);
    return listed!;
  }
}

/** An invite as the audit log names it: its code's first characters, never the whole code. */
function inviteLabel(code: string): string {
  return `invite ${code.slice(0, 4)}…`;
}

function usernameTaken(username: string) {
  return new AppError("username_taken", `username: "${username}" is taken`);
}

function inviteOrThrow(claim: Awaited<ReturnType<typeof lockInvite>>): Role {
  if (claim.state === "unknown") throw new AppError("not_found", "No such invite");
  if (claim.state === "used") throw new AppError("invite_used", "This invite was used already");
  if (claim.state === "expired") throw new AppError("invite_expired", "This invite has expired");
  return claim.role;
}
