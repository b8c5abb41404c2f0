import { useEffect, useRef, useState } from "preact/hooks";
import { TagInput } from "../components/TagInput.tsx";
import { ApiError, apiJson, sendJson, useToken } from "../lib/api_client.ts";
import type { ImageDto, TagDto } from "../lib/types.ts";
import { altText, libraryHref, parseTagList } from "../lib/ui.ts";

/** The tags of an image, copy buttons, and (signed in only) the tag editor and delete. */
export default function ImageControls({ image }: { image: ImageDto }) {
  const token = useToken();
  const [tags, setTags] = useState<TagDto[]>(image.tags);
  const [copied, setCopied] = useState("");
  const timer = useRef<ReturnType<typeof setTimeout>>();
  useEffect(() => () => clearTimeout(timer.current), []);

  const copy = async (what: string, text: string) => {
    try {
      await navigator.clipboard.writeText(text);
      setCopied(`Copied ${what}`);
    } catch {
      setCopied(`Could not copy; the ${what} is ${text}`);
    }
    clearTimeout(timer.current);
    timer.current = setTimeout(() => setCopied(""), 2500);
  };
  const fileUrl = () => new URL(image.file_url, location.href).href;
  const markdown = () => {
    const alt = altText({ tags }).replace(/[[\]\\]/g, "\\$&");
    return `![${alt}](${fileUrl().replace(/\(/g, "%28").replace(/\)/g, "%29")})`;
  };

  return (
    <div class="image-controls">
      <h2 class="visually-hidden">Tags</h2>
      {tags.length
        ? (
          <ul class="tag-list">
            {tags.map((t) => (
              <li key={t.name}>
                <a href={libraryHref([t.name])}>{t.name}</a>
              </li>
            ))}
          </ul>
        )
        : <p class="muted">No tags.</p>}
      <div class="actions">
        <button type="button" onClick={() => copy("link", fileUrl())}>Copy link</button>
        <button type="button" onClick={() => copy("Markdown", markdown())}>Copy Markdown</button>
        <span role="status" class="status">{copied}</span>
      </div>
      {token && <WriteControls image={image} tags={tags} onTags={setTags} />}
    </div>
  );
}

interface WriteProps {
  image: ImageDto;
  tags: TagDto[];
  onTags: (tags: TagDto[]) => void;
}

function WriteControls({ image, tags, onTags }: WriteProps) {
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState("");
  const input = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (editing) input.current?.focus();
  }, [editing]);
  const path = `/api/v1/images/${encodeURIComponent(image.short_id)}`;

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setMessage("");
    try {
      const updated = await sendJson<ImageDto>("PATCH", `${path}/tags`, {
        tags: parseTagList(text),
      });
      onTags(updated.tags);
      setEditing(false);
      setMessage("Tags saved");
    } catch (err) {
      setMessage(err instanceof ApiError ? err.message : "Network error, tags not saved");
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setBusy(true);
    try {
      await apiJson(path, { method: "DELETE" });
      location.assign("/");
    } catch (err) {
      setBusy(false);
      setMessage(err instanceof ApiError ? err.message : "Network error, not deleted");
    }
  };

  return (
    <section class="write-controls" aria-label="Edit image">
      {editing
        ? (
          <form class="tag-editor" onSubmit={save}>
            <label for="edit-tags">Tags (comma-separated)</label>
            <TagInput
              id="edit-tags"
              value={text}
              onValue={setText}
              disabled={busy}
              inputRef={input}
            />
            <button type="submit" disabled={busy}>Save tags</button>
            <button type="button" onClick={() => setEditing(false)}>Cancel</button>
          </form>
        )
        : (
          <button
            type="button"
            onClick={() => (setText(tags.map((t) => t.name).join(", ")), setEditing(true))}
          >
            Edit tags
          </button>
        )}
      {confirming
        ? (
          <span class="confirm" role="group" aria-label="Confirm delete">
            Delete this image for everyone?{" "}
            <button type="button" class="danger" disabled={busy} onClick={remove}>
              Yes, delete
            </button>
            <button type="button" onClick={() => setConfirming(false)}>Keep it</button>
          </span>
        )
        : <button type="button" class="danger" onClick={() => setConfirming(true)}>Delete</button>}
      <p role="status" class="status">{message}</p>
    </section>
  );
}
