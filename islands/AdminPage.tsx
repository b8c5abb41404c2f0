import { useEffect, useState } from "preact/hooks";
import { useCopier } from "../components/CopyFeedback.tsx";
import { ApiError, apiJson, sendJson, useMe, useToken } from "../client/api_client.ts";
import { formatDate, loginHref } from "../client/ui.ts";

interface User {
  username: string;
  role: "admin" | "member";
  disabled: boolean;
  created_at: string;
  uploads: number;
}
interface Invite {
  code: string;
  url: string;
  role: string;
  expires_at: string;
}
interface AuditEntry {
  at: string;
  actor: string;
  via: string | null;
  action: string;
  target: string | null;
  detail: Record<string, unknown>;
}

const message = (err: unknown, fallback: string) =>
  err instanceof ApiError ? err.message : fallback;

/** `/admin`: users (role, disable), invites (create, copy, withdraw) and the audit log. */
export default function AdminPage() {
  const token = useToken();
  const me = useMe();
  if (!token) {
    return (
      <p>
        <a href={loginHref("/admin")}>Sign in</a> as an admin to manage the board.
      </p>
    );
  }
  if (!me) return <p>Loading…</p>;
  if (me.role !== "admin") return <p>Only an admin can see this page.</p>;
  return (
    <>
      <Users self={me.username} />
      <Invites />
      <Audit />
    </>
  );
}

function Users({ self }: { self: string }) {
  const [users, setUsers] = useState<User[]>([]);
  const [status, setStatus] = useState("");
  const [error, setError] = useState("");
  useEffect(() => void apiJson<User[]>("/api/v1/users").then(setUsers, () => {}), []);
  const change = async (u: User, patch: Partial<Pick<User, "role" | "disabled">>) => {
    setError("");
    setStatus("");
    try {
      const updated = await sendJson<User>(
        "PATCH",
        `/api/v1/users/${encodeURIComponent(u.username)}`,
        patch,
      );
      setUsers((all) => all.map((x) => x.username === u.username ? updated : x));
      setStatus(
        "disabled" in patch
          ? `${u.username} ${patch.disabled ? "disabled: signed out, keys stopped" : "enabled"}`
          : `${u.username} is now ${updated.role === "admin" ? "an admin" : "a member"}`,
      );
    } catch (err) {
      setError(message(err, "Network error, nothing changed"));
    }
  };
  return (
    <section aria-labelledby="users-h">
      <h2 id="users-h">Users</h2>
      <div class="scroll" tabIndex={0} role="region" aria-label="Users table">
        <table class="list">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Role</th>
              <th scope="col">Uploads</th>
              <th scope="col">Joined</th>
              <th scope="col">Status</th>
            </tr>
          </thead>
          <tbody>
            {users.map((u) => (
              <tr key={u.username}>
                <td>
                  <a href={`/?uploader=${encodeURIComponent(u.username)}`}>{u.username}</a>
                </td>
                <td>
                  <select
                    aria-label={`Role of ${u.username}`}
                    value={u.role}
                    disabled={u.username === self}
                    onChange={(e) =>
                      change(u, {
                        role: (e.currentTarget as HTMLSelectElement).value as User["role"],
                      })}
                  >
                    <option value="member">member</option>
                    <option value="admin">admin</option>
                  </select>
                </td>
                <td>{u.uploads}</td>
                <td>{formatDate(u.created_at)}</td>
                <td>
                  {u.username === self ? <span class="muted">you</span> : (
                    <button
                      type="button"
                      class={u.disabled ? "" : "danger"}
                      onClick={() => change(u, { disabled: !u.disabled })}
                    >
                      {u.disabled ? "Enable" : "Disable"}{" "}
                      <span class="visually-hidden">{u.username}</span>
                    </button>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <p role="status" class="status">{status}</p>
      <p role="alert" class="error">{error}</p>
    </section>
  );
}

function Invites() {
  const [invites, setInvites] = useState<Invite[]>([]);
  const [error, setError] = useState("");
  const { copy, view } = useCopier("invite");
  const load = () => apiJson<Invite[]>("/api/v1/invites").then(setInvites, () => {});
  useEffect(() => void load(), []);
  const create = async (e: Event) => {
    e.preventDefault();
    const data = new FormData(e.currentTarget as HTMLFormElement);
    setError("");
    try {
      const made = await sendJson<Invite>("POST", "/api/v1/invites", {
        role: String(data.get("role")),
        expires_in_hours: Number(data.get("hours")),
      });
      await load();
      await copy("invite link", made.url);
    } catch (err) {
      setError(message(err, "Network error, no invite made"));
    }
  };
  const withdraw = async (code: string) => {
    setError("");
    try {
      await apiJson(`/api/v1/invites/${encodeURIComponent(code)}`, { method: "DELETE" });
      await load();
    } catch (err) {
      setError(message(err, "Network error, invite kept"));
    }
  };
  return (
    <section aria-labelledby="invites-h">
      <h2 id="invites-h">Invites</h2>
      <form class="inline-form" onSubmit={create}>
        <label for="invite-role">Role</label>
        <select id="invite-role" name="role">
          <option value="member">member</option>
          <option value="admin">admin</option>
        </select>
        <label for="invite-hours">Valid for (hours)</label>
        <input id="invite-hours" name="hours" type="number" min={1} max={8760} value="168" />
        <button type="submit">Create invite</button>
      </form>
      {view}
      <p role="alert" class="error">{error}</p>
      {invites.length === 0 ? <p class="muted">No open invites.</p> : (
        <ul class="invites">
          {invites.map((i) => (
            <li key={i.code}>
              <code>{i.code.slice(0, 6)}…</code> {i.role}, until {formatDate(i.expires_at)}{" "}
              <button type="button" onClick={() => copy("invite link", i.url)}>
                Copy link <span class="visually-hidden">{i.code.slice(0, 6)}</span>
              </button>{" "}
              <button type="button" class="danger" onClick={() => withdraw(i.code)}>
                Withdraw <span class="visually-hidden">{i.code.slice(0, 6)}</span>
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

function Audit() {
  const [items, setItems] = useState<AuditEntry[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const load = async (from: string | null) => {
    setBusy(true);
    try {
      const page = await apiJson<{ items: AuditEntry[]; next_cursor: string | null }>(
        `/api/v1/audit?limit=50${from ? `&cursor=${encodeURIComponent(from)}` : ""}`,
      );
      setItems((old) => from ? [...old, ...page.items] : page.items);
      setCursor(page.next_cursor);
    } finally {
      setBusy(false);
    }
  };
  useEffect(() => void load(null).catch(() => {}), []);
  return (
    <section aria-labelledby="audit-h">
      <h2 id="audit-h">Audit log</h2>
      <div class="scroll" tabIndex={0} role="region" aria-label="Audit log table">
        <table class="list audit">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">On</th>
              <th scope="col">Detail</th>
            </tr>
          </thead>
          <tbody>
            {items.map((e, i) => (
              <tr key={i}>
                <td>
                  <time datetime={e.at}>{new Date(e.at).toLocaleString()}</time>
                </td>
                <td>{e.actor}{e.via && <span class="muted">{` (key “${e.via}”)`}</span>}</td>
                <td>{e.action}</td>
                <td>{e.target}</td>
                <td class="detail-json">
                  {Object.keys(e.detail).length ? JSON.stringify(e.detail) : ""}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {cursor && (
        <button type="button" disabled={busy} onClick={() => load(cursor)}>
          {busy ? "Loading…" : "Older entries"}
        </button>
      )}
    </section>
  );
}
