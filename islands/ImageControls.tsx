import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import { Star } from "../components/Star.tsx";
import { TagInput } from "../components/TagInput.tsx";
import { api, ApiError, apiJson, sendJson, useToken } from "../client/api_client.ts";
import type { ImageDto, TagDto } from "../domain/types.ts";
import { altText, libraryHref, parseTagText } from "../client/ui.ts";
import { htmlOf, markdownOf } from "../domain/share_links.ts";
import { useCopier } from "../components/CopyFeedback.tsx";
import { ShareButton } from "../components/ShareButton.tsx";

/** The addresses the copy buttons use (absolute, on the public origin) and the image's path. */
export interface ShareProps {
  /** The direct link, `{origin}/{short_id}.{ext}`. */
  direct: string;
  /** The same, as a path on this site (fetched to copy the image itself). */
  directPath: string;
}

/** The tags of an image, copy buttons, and (signed in only) the tag editor and delete. */
export default function ImageControls({ image, share }: { image: ImageDto; share: ShareProps }) {
  const token = useToken();
  const [tags, setTags] = useState<TagDto[]>(image.tags);
  const { copy, copyImage, view } = useCopier("detail");
  const gif = image.content_type === "image/gif";
  const alt = () => altText({ tags });
  const [favorite, setFavorite] = useState<boolean | null>(null);
  const [count, setCount] = useState(image.favorite_count);
  // A signed-in person's copy counts as a send (once a day per person, the server decides).
  const sent = () => {
    if (!token) return;
    const path = `/api/v1/images/${encodeURIComponent(image.short_id)}/sends`;
    api(path, { method: "POST", allow401: true }).catch(() => {});
  };
  useEffect(() => {
    if (!token) return setFavorite(null);
    apiJson<{ short_ids: string[] }>(
      `/api/v1/me/favorites?among=${encodeURIComponent(image.short_id)}`,
      // A rejected token shows no star; a write drops it and goes to sign in.
      { allow401: true },
    ).then((r) => setFavorite(r.short_ids.includes(image.short_id)), () => setFavorite(null));
  }, [token]);

  return (
    <div class="image-controls">
      <p class="favorites">
        {token && favorite !== null && (
          <Star
            shortId={image.short_id}
            on={favorite}
            onChange={(on) => (setFavorite(on), setCount((n) => n + (on ? 1 : -1)))}
          />
        )}{" "}
        <span class="muted">
          {count === 1 ? "1 favourite" : `${count} favourites`}
        </span>
      </p>
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
      <h2 class="visually-hidden">Share</h2>
      <div class="actions share">
        <ShareButton
          item={{
            path: share.directPath,
            name: share.directPath.slice(1),
            type: image.content_type,
            link: share.direct,
          }}
        />
        <button
          type="button"
          onClick={() => (sent(), copyImage(share.directPath, share.direct, gif))}
        >
          Copy image
        </button>
        <button type="button" onClick={() => (sent(), copy("link", share.direct))}>
          Copy link
        </button>
        <button
          type="button"
          onClick={() => (sent(), copy("Markdown", markdownOf(alt(), share.direct)))}
        >
          Copy Markdown
        </button>
        <button
          type="button"
          onClick={() => (sent(), copy("HTML", htmlOf(alt(), share.direct, image)))}
        >
          Copy HTML
        </button>
        {view}
      </div>
      {gif && (
        <p class="muted note">
          Chat apps take a copied image as PNG, so Copy image gives the GIF's first frame. Paste the
          link to keep it animated.
        </p>
      )}
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
  // In the same task as the render that shows the editor (an effect runs after paint): keys
  // pressed right after "Edit tags" land in the input, not on the page (a browser test under load
  // typed into nothing).
  useLayoutEffect(() => {
    if (editing) input.current?.focus();
  }, [editing]);
  const path = `/api/v1/images/${encodeURIComponent(image.short_id)}`;

  const save = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setMessage("");
    try {
      const updated = await sendJson<ImageDto>("PATCH", `${path}/tags`, {
        tags: parseTagText(text),
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
