/** Signing in through HTTP in tests, from a chosen socket peer, and reading the limiter's rows. */
import { limiterKey } from "../../adapters/http/mod.ts";
import { TEST_PASSWORD, type TestService } from "./app.ts";

/** What `getConnInfo` from `hono/deno` reads: the third argument of `app.request()`. */
export function peer(hostname: string) {
  return { remoteAddr: { hostname, port: 1234, transport: "tcp" as const } };
}

/** Options of `login()`; by default the right credential as JSON from 203.0.113.7. */
export interface LoginOptions {
  username?: string;
  password?: string;
  ip?: string;
  headers?: Record<string, string>;
  encoding?: "json" | "form" | "multipart";
}

/** A wrong password that must never appear in logs either. */
export const WRONG_PASSWORD = "wrong-password-7f3a9c";

/** `POST /api/v1/auth/token` on `app`. */
export function login(
  app: Pick<TestService["app"], "request">,
  opts: LoginOptions = {},
): Promise<Response> {
  const fields = { username: opts.username ?? "admin", password: opts.password ?? TEST_PASSWORD };
  const headers: Record<string, string> = { ...opts.headers };
  let body: BodyInit;
  if (opts.encoding === "form") {
    body = new URLSearchParams({ grant_type: "password", ...fields });
  } else if (opts.encoding === "multipart") {
    const form = new FormData();
    for (const [k, v] of Object.entries(fields)) form.append(k, v);
    body = form;
  } else {
    headers["content-type"] = "application/json";
    body = JSON.stringify(fields);
  }
  const init = { method: "POST", headers, body };
  return Promise.resolve(app.request("/api/v1/auth/token", init, peer(opts.ip ?? "203.0.113.7")));
}

/** A failed login (wrong password); the body is consumed, the status returned. */
export async function fail(
  app: Pick<TestService["app"], "request">,
  opts: LoginOptions = {},
): Promise<number> {
  const res = await login(app, { password: WRONG_PASSWORD, ...opts });
  await res.body?.cancel();
  return res.status;
}

/** The limiter row of `ip` (its /64 for IPv6), or null. */
export async function limiterRow(svc: TestService, ip: string) {
  const [row] = await svc.db.sql<{ failures: number; locked: boolean }[]>`
    select failures, coalesce(locked_until > now(), false) as locked
    from login_failures where ip = ${limiterKey(ip)}`;
  return row ?? null;
}

/** Moves the window and lock of `ip` `seconds` into the past, as if that time had gone by. */
export async function timePasses(svc: TestService, ip: string, seconds: number) {
  await svc.db.sql`
    update login_failures set
      window_started_at = window_started_at - make_interval(secs => ${seconds}),
      locked_until = locked_until - make_interval(secs => ${seconds})
    where ip = ${limiterKey(ip)}`;
}
