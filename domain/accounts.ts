/**
 * The rules of accounts (issue 42), pure: usernames, passwords, roles, API key scopes and the
 * format of a key, and who may do what. Anything may import it; it imports only the error table.
 */
import { AppError } from "./errors.ts";

/** An account's role: a member uploads and edits; an admin also keeps the rules and the people. */
export type Role = "admin" | "member";
/** Every role, least first. */
export const ROLES = ["member", "admin"] as const satisfies readonly Role[];

/** What an API key may do on its owner's behalf. */
export type Scope = "upload" | "edit" | "delete";
/** Every scope. */
export const SCOPES = ["upload", "edit", "delete"] as const satisfies readonly Scope[];

/** Usernames: 3-32 of `a-z 0-9 _ . -` (stored lower-case, so unique regardless of case). */
export const USERNAME_PATTERN = /^[a-z0-9_.-]{3,32}$/;
/** The shortest password an account may have. */
export const MIN_PASSWORD_LENGTH = 10;
/** The longest password accepted anywhere (the sign-in route's own cap). */
export const MAX_PASSWORD_LENGTH = 1024;
/** Every API key starts with this, so a bearer value is told apart from a JWT at a glance. */
export const API_KEY_PREFIX = "rb_";
/** Random bytes in a key: 256 bits, so a fast hash (SHA-256) is the right one to store. */
export const API_KEY_BYTES = 32;
/** Most live keys one account may hold. */
export const MAX_API_KEYS = 20;

/**
 * `raw` as a username (lower-cased), or 422 `invalid_username`; `reserved` (the configured
 * admin's name) is refused too, in any case.
 */
export function parseUsername(raw: string, reserved: string): string {
  const name = raw.trim().toLowerCase();
  if (!USERNAME_PATTERN.test(name)) {
    throw new AppError(
      "invalid_username",
      "username: 3-32 characters of a-z, 0-9, _, . and -",
    );
  }
  if (name === reserved.toLowerCase()) {
    throw new AppError("username_taken", `username: "${name}" is taken`);
  }
  return name;
}

/** Refuses a new password shorter than MIN_PASSWORD_LENGTH with 422 `weak_password`. */
export function checkNewPassword(password: string): void {
  if ([...password].length < MIN_PASSWORD_LENGTH) {
    throw new AppError(
      "weak_password",
      `password: at least ${MIN_PASSWORD_LENGTH} characters`,
      { fields: { min_length: MIN_PASSWORD_LENGTH } },
    );
  }
  if (password.length > MAX_PASSWORD_LENGTH) {
    throw new AppError("weak_password", `password: at most ${MAX_PASSWORD_LENGTH} characters`);
  }
}

/** True when `bearer` has the shape of an API key (not a JWT). */
export function isApiKey(bearer: string): boolean {
  return bearer.startsWith(API_KEY_PREFIX);
}

/** Who a request acts as: an account, and the API key it came with, if any. */
export interface Principal {
  userId: string;
  username: string;
  role: Role;
  /** The key used, or null for a signed-in session (a JWT). */
  key: { id: string; name: string; scopes: Scope[] } | null;
}

/**
 * What a route needs. `keys` says whether an API key may call it at all (`"refused"`: only a
 * session; `"any"`: any key; a scope: keys holding it). `owner` names the path parameter of an
 * image that a member must have uploaded (an admin passes).
 */
export type Rule =
  | { public: true }
  | { public?: false; role: Role; keys: "refused" | "any" | Scope; owner?: "id" };

/** Why `principal` may not do what `rule` guards, or null when it may (ownership aside). */
export function refusal(principal: Principal, rule: Rule): string | null {
  if (rule.public) return null;
  if (rule.role === "admin" && principal.role !== "admin") return "Only an admin may do this";
  if (principal.key) {
    if (rule.keys === "refused") return "An API key cannot do this; sign in instead";
    if (rule.keys !== "any" && !principal.key.scopes.includes(rule.keys)) {
      return `This API key lacks the "${rule.keys}" scope`;
    }
  }
  return null;
}

/** True when a member may change image state owned by `uploaderId` (admins always may). */
export function ownsOrAdmin(principal: Principal, uploaderId: string | null): boolean {
  return principal.role === "admin" || (uploaderId !== null && uploaderId === principal.userId);
}
