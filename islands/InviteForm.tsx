import { useState } from "preact/hooks";
import { api, storeToken } from "../client/api_client.ts";

/** Why an acceptance was refused, in words, from the answer's status and code. */
function refusal(status: number, body: { code?: string; detail?: string } | null): string {
  if (status === 404) return "This invite does not exist (it may have been withdrawn).";
  if (body?.code === "invite_used") return "This invite has been used already.";
  if (body?.code === "invite_expired") return "This invite has expired. Ask for a new one.";
  if (body?.code === "username_taken") return "That name is taken; choose another.";
  if (status === 429) return "Too many attempts from here; try again later.";
  return body?.detail ?? `Something went wrong (HTTP ${status})`;
}

/** Accepting invite `code`: choose a name and a password, then signed in and at the library. */
export default function InviteForm({ code }: { code: string }) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState("");
  const submit = async (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget as HTMLFormElement);
    setBusy(true);
    setError("");
    try {
      const res = await api(`/api/v1/invites/${encodeURIComponent(code)}/accept`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({
          username: String(data.get("username")).trim(),
          password: String(data.get("password")),
        }),
        allow401: true,
      });
      const body = await res.json().catch(() => null);
      if (res.status === 201 && typeof body?.access_token === "string") {
        storeToken(body.access_token, Number(body.expires_in) || 3600);
        location.assign("/");
        return;
      }
      setError(refusal(res.status, body));
    } catch {
      setError("Network error, try again");
    }
    setBusy(false);
  };
  return (
    <form class="login" method="post" onSubmit={submit}>
      <label for="username">Username (3-32 of a-z, 0-9, _ . -)</label>
      <input
        id="username"
        name="username"
        autocomplete="username"
        pattern="[A-Za-z0-9_.\-]{3,32}"
        required
      />
      <label for="password">Password (at least 10 characters)</label>
      <input
        id="password"
        name="password"
        type="password"
        autocomplete="new-password"
        minLength={10}
        required
      />
      <button type="submit" disabled={busy}>{busy ? "Joining…" : "Join"}</button>
      <p role="alert" class="error">{error}</p>
    </form>
  );
}
