import { useState } from "preact/hooks";
import { api, storeToken } from "../client/api_client.ts";
import { safeNext } from "../client/ui.ts";

/** "Too many attempts, try again in N minutes" from a 429's `retry_after` (seconds). */
export function lockedMessage(retryAfterSeconds: number): string {
  const minutes = Math.max(1, Math.ceil(retryAfterSeconds / 60));
  return `Too many attempts, try again in ${minutes} minute${minutes === 1 ? "" : "s"}`;
}

/** The sign-in form; on success stores the token and returns to `next` (same-origin only). */
export default function LoginForm({ next }: { next: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");

  const submit = async (e: Event) => {
    e.preventDefault();
    const form = new FormData(e.currentTarget as HTMLFormElement);
    const username = String(form.get("username") ?? "");
    const password = String(form.get("password") ?? "");
    setBusy(true);
    setError("");
    try {
      const res = await api("/api/v1/auth/token", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ username, password }),
        allow401: true,
      });
      const body = await res.json().catch(() => null);
      if (res.ok && typeof body?.access_token === "string") {
        storeToken(body.access_token, Number(body.expires_in) || 3600);
        location.assign(safeNext(next));
        return;
      }
      if (res.status === 401) setError("Wrong username or password");
      else if (res.status === 429) {
        const seconds = Number(body?.retry_after ?? res.headers.get("Retry-After")) || 60;
        setError(lockedMessage(seconds));
      } else {setError(
          typeof body?.detail === "string" ? body.detail : `Sign-in failed (HTTP ${res.status})`,
        );}
    } catch {
      setError("Network error, try again");
    }
    setBusy(false);
  };

  return (
    <form class="login" method="post" onSubmit={submit}>
      <label for="username">Username</label>
      <input
        id="username"
        name="username"
        autocomplete="username"
        required
      />
      <label for="password">Password</label>
      <input
        id="password"
        name="password"
        type="password"
        autocomplete="current-password"
        required
      />
      <button type="submit" disabled={busy}>{busy ? "Signing in…" : "Sign in"}</button>
      <p role="alert" class="error">{error}</p>
    </form>
  );
}
