import { useEffect, useState } from "preact/hooks";
import { useCopier } from "../components/CopyFeedback.tsx";
import { ApiError, apiJson, clearToken, sendJson, useMe, useToken } from "../client/api_client.ts";
import { sharexFileName, sharexUploader } from "../client/sharex.ts";
import { formatDate, loginHref } from "../client/ui.ts";

interface ApiKey {
  id: string;
  name: string;
  scopes: string[];
  created_at: string;
  last_used_at: string | null;
}

const SCOPES = [
  ["upload", "Upload"],
  ["edit", "Edit tags and captions, favourites"],
  ["delete", "Delete and merge (your own uploads; any, for an admin)"],
] as const;

const message = (err: unknown, fallback: string) =>
  err instanceof ApiError ? err.message : fallback;

/** `/me`: your password, your API keys (with a ShareX uploader), sign out everywhere. */
export default function MePage() {
  const token = useToken();
  const me = useMe();
  if (!token) {
    return (
      <p>
        <a href={loginHref("/me")}>Sign in</a> to see your account.
      </p>
    );
  }
  return (
    <>
      <p>
        {me
          ? (
            <>
              Signed in as <strong>{me.username}</strong> ({me.role}).
            </>
          )
          : "Loading…"} <a href="/favorites">Your favourites</a>
        {me && (
          <>
            {" · "}
            <a href={`/?uploader=${encodeURIComponent(me.username)}`}>Your uploads</a>
          </>
        )}
      </p>
      <PasswordForm />
      <ApiKeys />
      <section aria-labelledby="sessions-h">
        <h2 id="sessions-h">Sessions</h2>
        <p class="muted">Ends every sign-in of this account, on every device. Keys keep working.</p>
        <SignOutEverywhere />
      </section>
    </>
  );
}

function PasswordForm() {
  const [status, setStatus] = useState("");
  const [error, setError] = useState("");
  const submit = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setStatus("");
    setError("");
    try {
      await sendJson("PATCH", "/api/v1/me/password", {
        current_password: String(data.get("current_password")),
        new_password: String(data.get("new_password")),
      });
      form.reset();
      setStatus("Password changed");
    } catch (err) {
      setError(message(err, "Network error, password not changed"));
    }
  };
  return (
    <section aria-labelledby="password-h">
      <h2 id="password-h">Password</h2>
      <form class="stack" onSubmit={submit}>
        <label for="current-password">Current password</label>
        <input
          id="current-password"
          name="current_password"
          type="password"
          autocomplete="current-password"
          required
        />
        <label for="new-password">New password (at least 10 characters)</label>
        <input
          id="new-password"
          name="new_password"
          type="password"
          autocomplete="new-password"
          minLength={10}
          required
        />
        <button type="submit">Change password</button>
        <p role="status" class="status">{status}</p>
        <p role="alert" class="error">{error}</p>
      </form>
    </section>
  );
}

function ApiKeys() {
  const [keys, setKeys] = useState<ApiKey[] | null>(null);
  const [created, setCreated] = useState<(ApiKey & { key: string }) | null>(null);
  const [error, setError] = useState("");
  const { copy, view } = useCopier("key");
  const load = () => apiJson<ApiKey[]>("/api/v1/me/api-keys").then(setKeys, () => setKeys([]));
  useEffect(() => void load(), []);

  const create = async (e: Event) => {
    e.preventDefault();
    const form = e.currentTarget as HTMLFormElement;
    const data = new FormData(form);
    setError("");
    try {
      const key = await sendJson<ApiKey & { key: string }>("POST", "/api/v1/me/api-keys", {
        name: String(data.get("name")).trim(),
        scopes: data.getAll("scopes").map(String),
      });
      form.reset();
      setCreated(key);
      await load();
    } catch (err) {
      setError(message(err, "Network error, no key made"));
    }
  };
  const revoke = async (id: string) => {
    setError("");
    try {
      await apiJson(`/api/v1/me/api-keys/${encodeURIComponent(id)}`, { method: "DELETE" });
      if (created?.id === id) setCreated(null);
      await load();
    } catch (err) {
      setError(message(err, "Network error, key not revoked"));
    }
  };
  const downloadSharex = (key: string) => {
    const blob = new Blob([JSON.stringify(sharexUploader(location.origin, key), null, 2)], {
      type: "application/json",
    });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = sharexFileName(location.origin);
    a.click();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  };

  return (
    <section aria-labelledby="keys-h">
      <h2 id="keys-h">API keys</h2>
      <p class="muted">
        For scripts, ShareX and{" "}
        <code>deno task import --api-key</code>. A key acts as you, within its scopes; it cannot
        change your password or manage keys.
      </p>
      {created && (
        <dialog open class="new-key" aria-labelledby="new-key-h">
          <h3 id="new-key-h">Key “{created.name}” created</h3>
          <p>Copy it now: it is shown only once.</p>
          <input
            readOnly
            aria-label="The new API key"
            value={created.key}
            onFocus={(e) => (e.currentTarget as HTMLInputElement).select()}
          />
          <div class="actions">
            <button type="button" onClick={() => copy("key", created.key)}>Copy key</button>
            {created.scopes.includes("upload") && (
              <button
                type="button"
                onClick={() => downloadSharex(created.key)}
              >
                Download ShareX uploader
              </button>
            )}
            <button type="button" onClick={() => setCreated(null)}>Done</button>
          </div>
          {view}
        </dialog>
      )}
      {keys && keys.length > 0 && (
        <div class="scroll" tabIndex={0} role="region" aria-label="API keys table">
          <table class="list">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Scopes</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">
                  <span class="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td>{k.name}</td>
                  <td>{k.scopes.join(", ")}</td>
                  <td>{formatDate(k.created_at)}</td>
                  <td>{k.last_used_at ? formatDate(k.last_used_at) : "never"}</td>
                  <td>
                    <button
                      type="button"
                      class="danger"
                      onClick={() => revoke(k.id)}
                    >
                      Revoke <span class="visually-hidden">{k.name}</span>
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {keys && keys.length === 0 && <p class="muted">No keys yet.</p>}
      <form class="stack" onSubmit={create}>
        <label for="key-name">New key’s name</label>
        <input
          id="key-name"
          name="name"
          maxLength={64}
          required
          placeholder="ShareX on my laptop"
        />
        <fieldset>
          <legend>Scopes</legend>
          {SCOPES.map(([value, label]) => (
            <label key={value} class="check">
              <input type="checkbox" name="scopes" value={value} /> {label}
            </label>
          ))}
        </fieldset>
        <button type="submit">Create key</button>
        <p role="alert" class="error">{error}</p>
      </form>
    </section>
  );
}

function SignOutEverywhere() {
  const [error, setError] = useState("");
  const run = async () => {
    try {
      await apiJson("/api/v1/me/sign-out-everywhere", { method: "POST" });
      clearToken();
      location.assign("/login");
    } catch (err) {
      setError(message(err, "Network error, still signed in"));
    }
  };
  return (
    <>
      <button type="button" class="danger" onClick={run}>Sign out everywhere</button>
      <p role="alert" class="error">{error}</p>
    </>
  );
}
