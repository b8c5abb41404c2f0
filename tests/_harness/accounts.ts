/** Accounts in tests: the admin's token, members made through invites, API keys, requests. */
import { TEST_PASSWORD, type TestService } from "./app.ts";
import { peer } from "./login.ts";

/** A password every test member gets. */
export const MEMBER_PASSWORD = "member password 1234";

let calls = 0;

/**
 * A source address of its own for each call: the sign-in lock counts failures per address, so
 * the refused sign-ins of one test never lock out the next (the shuffled order decides which).
 */
function freshAddress(): string {
  calls++;
  return `100.64.${(calls >> 8) & 255}.${calls & 255}`;
}

/**
 * A request to `/api/v1{path}` with a bearer value and an optional JSON body, from `ip` (by
 * default an address no other call used).
 */
export async function call(
  svc: TestService,
  method: string,
  path: string,
  bearer?: string | null,
  body?: unknown,
  ip = freshAddress(),
): Promise<Response> {
  const headers: Record<string, string> = {};
  if (bearer) headers.authorization = `Bearer ${bearer}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  return await svc.app.request(`/api/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  }, peer(ip));
}

/** `call()` that must answer `status`; the JSON body (null for none). */
export async function expect(
  status: number,
  res: Response | Promise<Response>,
): Promise<
  // deno-lint-ignore no-explicit-any
  any
> {
  const r = await res;
  const text = await r.text();
  if (r.status !== status) throw new Error(`expected ${status}, got ${r.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Signs in as `username` and returns the access token. */
export async function signIn(
  svc: TestService,
  username = "admin",
  password = TEST_PASSWORD,
): Promise<string> {
  const body = await expect(200, call(svc, "POST", "/auth/token", null, { username, password }));
  return body.access_token;
}

/** An invite code made by `adminToken`. */
export async function invite(
  svc: TestService,
  adminToken: string,
  role: "member" | "admin" = "member",
): Promise<string> {
  return (await expect(201, call(svc, "POST", "/invites", adminToken, { role }))).code;
}

/** A new account (through an invite) and its token. */
export async function newMember(
  svc: TestService,
  adminToken: string,
  username = `m_${crypto.randomUUID().slice(0, 8)}`,
  role: "member" | "admin" = "member",
): Promise<{ username: string; token: string }> {
  const code = await invite(svc, adminToken, role);
  const body = await expect(
    201,
    call(svc, "POST", `/invites/${code}/accept`, null, { username, password: MEMBER_PASSWORD }),
  );
  return { username, token: body.access_token };
}

/** A new API key of the account behind `token`, with `scopes`. */
export async function newKey(
  svc: TestService,
  token: string,
  scopes: string[],
  name = `key ${crypto.randomUUID().slice(0, 6)}`,
): Promise<{ id: string; key: string }> {
  const body = await expect(201, call(svc, "POST", "/me/api-keys", token, { name, scopes }));
  return { id: body.id, key: body.key };
}
