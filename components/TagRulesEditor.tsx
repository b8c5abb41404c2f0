import { useState } from "preact/hooks";
import { ApiError, apiJson, sendJson } from "../client/api_client.ts";
import type { TagAliasDto, TagImplicationDto } from "../domain/types.ts";
import { parseTagText } from "../client/ui.ts";
import { TagInput } from "./TagInput.tsx";

/** Props: the rules as loaded, and what to call after a change. */
export interface TagRulesEditorProps {
  aliases: TagAliasDto[];
  implications: TagImplicationDto[];
  onChanged: () => void;
}

const enc = encodeURIComponent;

/**
 * The signed-in part of the tags page: create and remove aliases and implications, rename or
 * merge a tag. Used inside the TagBrowser island; every change goes through the API.
 */
export function TagRulesEditor({ aliases, implications, onChanged }: TagRulesEditorProps) {
  const [alias, setAlias] = useState("");
  const [target, setTarget] = useState("");
  const [tag, setTag] = useState("");
  const [implies, setImplies] = useState("");
  const [from, setFrom] = useState("");
  const [to, setTo] = useState("");
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState("");

  const run = async (e: Event | null, change: () => Promise<string>) => {
    e?.preventDefault();
    setBusy(true);
    setMessage("");
    try {
      setMessage(await change());
      onChanged();
    } catch (err) {
      setMessage(err instanceof ApiError ? err.message : "Network error, nothing changed");
    } finally {
      setBusy(false);
    }
  };
  const one = (text: string) => parseTagText(text)[0] ?? text.trim();

  return (
    <section class="tag-rules" aria-label="Edit tag rules">
      <h2>Aliases, implications, rename</h2>
      <form
        onSubmit={(e) =>
          run(e, async () => {
            const made = await sendJson<TagAliasDto>(
              "PUT",
              `/api/v1/tag-aliases/${enc(one(alias))}`,
              {
                target: one(target),
              },
            );
            setAlias("");
            setTarget("");
            return `"${made.alias}" now means "${made.target}"`;
          })}
      >
        <label for="alias-name">Alias</label>
        <input
          id="alias-name"
          value={alias}
          autocomplete="off"
          onInput={(e) => setAlias(e.currentTarget.value)}
          disabled={busy}
        />
        <label for="alias-target">means</label>
        <TagInput id="alias-target" value={target} onValue={setTarget} disabled={busy} />
        <button type="submit" disabled={busy}>Add alias</button>
      </form>
      <form
        onSubmit={(e) =>
          run(e, async () => {
            const set = await sendJson<TagImplicationDto>(
              "PUT",
              `/api/v1/tag-implications/${enc(one(tag))}`,
              { implies: parseTagText(implies) },
            );
            setTag("");
            setImplies("");
            return `"${set.tag}" implies ${set.implies.join(", ") || "nothing"}`;
          })}
      >
        <label for="implication-tag">Tag</label>
        <TagInput id="implication-tag" value={tag} onValue={setTag} disabled={busy} />
        <label for="implication-implies">implies</label>
        <TagInput id="implication-implies" value={implies} onValue={setImplies} disabled={busy} />
        <button type="submit" disabled={busy}>Set implications</button>
      </form>
      <form
        onSubmit={(e) =>
          run(e, async () => {
            const done = await sendJson<{ name: string; merged: boolean }>(
              "PATCH",
              `/api/v1/tags/${enc(one(from))}`,
              { name: one(to) },
            );
            setFrom("");
            setTo("");
            return done.merged ? `Merged into "${done.name}"` : `Renamed to "${done.name}"`;
          })}
      >
        <label for="rename-from">Rename tag</label>
        <TagInput id="rename-from" value={from} onValue={setFrom} disabled={busy} />
        <label for="rename-to">to (an existing tag merges)</label>
        <input
          id="rename-to"
          value={to}
          autocomplete="off"
          onInput={(e) => setTo(e.currentTarget.value)}
          disabled={busy}
        />
        <button type="submit" disabled={busy}>Rename</button>
      </form>
      <p role="status" class="status">{message}</p>
      <h3>Aliases</h3>
      {aliases.length === 0 ? <p class="muted">No aliases.</p> : (
        <ul class="rule-list">
          {aliases.map((a) => (
            <li key={a.alias}>
              {a.alias} → {a.target}{" "}
              <button
                type="button"
                disabled={busy}
                aria-label={`Remove alias ${a.alias}`}
                onClick={() =>
                  run(null, async () => {
                    await apiJson(`/api/v1/tag-aliases/${enc(a.alias)}`, { method: "DELETE" });
                    return `Alias "${a.alias}" removed`;
                  })}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <h3>Implications</h3>
      {implications.length === 0 ? <p class="muted">No implications.</p> : (
        <ul class="rule-list">
          {implications.map((i) => (
            <li key={i.tag}>
              {i.tag} ⇒ {i.implies.join(", ")}{" "}
              <button
                type="button"
                disabled={busy}
                aria-label={`Remove implications of ${i.tag}`}
                onClick={() =>
                  run(null, async () => {
                    await apiJson(`/api/v1/tag-implications/${enc(i.tag)}`, { method: "DELETE" });
                    return `"${i.tag}" implies nothing now`;
                  })}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
