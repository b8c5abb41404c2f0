import { useEffect, useRef, useState } from "preact/hooks";
import { type Caption, LiveCaption } from "../components/CaptionText.tsx";
import { LooksLike } from "../components/LooksLike.tsx";
import { TagInput } from "../components/TagInput.tsx";
import {
  ApiError,
  readToken,
  sendJson,
  uploadImage,
  type UploadResult,
} from "../client/api_client.ts";
import { formatBytes, loginHref, parseTagText } from "../client/ui.ts";
import { searchByImage } from "../client/search_by_image.ts";
import { SharedFiles, useSharedFiles } from "../components/SharedFiles.tsx";
import type { ImageDto } from "../domain/types.ts";

/**
 * How near an image on the board must be for a file to be held back before it is sent: the
 * distance of near-duplicates (domain/similar.ts DEFAULT_DISTANCE).
 */
const ALREADY_HERE_DISTANCE = 8;

const ACCEPT = "image/jpeg,image/png,image/gif,image/webp,image/avif";
const PARALLEL = 2;

interface Item {
  key: number;
  name: string;
  size: number;
  progress: number;
  state: "queued" | "checking" | "matched" | "uploading" | "done" | "failed";
  /** The image on the board this file looks like, found before sending it. */
  match?: ImageDto;
  /** The tags the held file would have been given. */
  heldTags?: string[];
  message?: string;
  shortId?: string;
  /** Near-duplicates were found (issue 22): the row offers "Looks like". */
  similar?: boolean;
  /** Where the row links once a near-duplicate was resolved (null: nowhere). */
  resolved?: { href: string | null };
  /** The caption when uploaded (usually not read yet: the row shows it once it is). */
  caption?: Caption;
}

/** The words for an upload outcome, from the status and the error body. */
export function describeUpload({ status, body }: UploadResult): Pick<Item, "state" | "message"> {
  const detail = typeof body?.detail === "string" ? body.detail : "";
  if (status === 201) return { state: "done", message: "Uploaded" };
  if (status === 200) {
    // The same content was uploaded before; the tags given were added to it.
    const names = Array.isArray(body?.tags)
      ? body.tags.map((t: { name?: unknown }) => t?.name).filter((n) => typeof n === "string")
      : [];
    if (names.length === 0) return { state: "done", message: "Already here" };
    const shown = names.slice(0, 5).join(", ") + (names.length > 5 ? ` +${names.length - 5}` : "");
    return { state: "done", message: `Already here, tagged ${shown}` };
  }
  if (status === 413) {
    const max = Number(body?.max_bytes);
    return { state: "failed", message: max ? `Too large (max ${formatBytes(max)})` : "Too large" };
  }
  if (status === 415) return { state: "failed", message: "Not a supported image" };
  if (status === 422) {
    const pixels = body?.code === "too_many_pixels" || /pixel/i.test(detail);
    return { state: "failed", message: pixels ? "Too many pixels" : detail || "Rejected" };
  }
  if (status === 503) return { state: "failed", message: "Server busy, try again" };
  if (status === 0) return { state: "failed", message: "Network error, try again" };
  return { state: "failed", message: detail || `Failed (HTTP ${status})` };
}

/**
 * The image on the board that `file` looks like, unless it is the very same content: that is sent
 * as before, and the server adds the batch's tags to the image it has ("Already here").
 */
async function findOnBoard(file: File): Promise<ImageDto | undefined> {
  const found = await searchByImage(file, ALREADY_HERE_DISTANCE);
  if (!found.ok || found.items.length === 0) return undefined;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", await file.arrayBuffer()));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, "0")).join("");
  return found.items.some((m) => m.image.hash === hex) ? undefined : found.items[0].image;
}

/** A file waiting to be sent; `checked` once it was searched for on the board (or need not be). */
interface Job {
  key: number;
  file: File;
  tags: string[];
  checked?: boolean;
}

/**
 * Upload several images by drop, picker, paste or a share from another app; one request per file
 * with progress. Each file is first searched for on the board (search by image): when the board
 * already has it, the row offers to open it or add the tags to it instead, or to upload anyway.
 */
export default function Uploader() {
  const [ready, setReady] = useState(false);
  const [tags, setTags] = useState("");
  const [items, setItems] = useState<Item[]>([]);
  const [over, setOver] = useState(false);
  const queue = useRef<Job[]>([]);
  const running = useRef(0);
  const nextKey = useRef(0);
  const tagsRef = useRef(tags);
  tagsRef.current = tags;

  const update = (key: number, patch: Partial<Item>) =>
    setItems((all) => all.map((it) => it.key === key ? { ...it, ...patch } : it));

  const held = useRef(new Map<number, Job>());
  const pump = () => {
    while (running.current < PARALLEL && queue.current.length) {
      const job = queue.current.shift()!;
      running.current++;
      if (!job.checked) {
        update(job.key, { state: "checking" });
        findOnBoard(job.file).then((match) => {
          running.current--;
          // Advisory: a refused or failed search (429 included) lets the file go.
          if (match) {
            held.current.set(job.key, job);
            update(job.key, { state: "matched", match, heldTags: job.tags });
          } else queue.current.unshift({ ...job, checked: true });
          pump();
        });
        continue;
      }
      update(job.key, { state: "uploading" });
      uploadImage(job.file, job.tags, (p) => update(job.key, { progress: p })).then((res) => {
        const id = typeof res.body?.short_id === "string" ? res.body.short_id : undefined;
        // Only a new image is offered "Looks like": on a 200 the image was already here, and
        // "Delete the new one" would delete the old one.
        const similar = res.status === 201 && Array.isArray(res.body?.similar) &&
          res.body.similar.length > 0;
        const caption = id && res.body && "text" in res.body
          ? (res.body as unknown as Caption)
          : undefined;
        update(job.key, { ...describeUpload(res), progress: 1, shortId: id, similar, caption });
        running.current--;
        pump();
      });
    }
  };

  /** The held file `key` is sent after all. */
  const uploadAnyway = (key: number) => {
    const job = held.current.get(key);
    if (!job) return;
    held.current.delete(key);
    queue.current.push({ ...job, checked: true });
    update(key, { state: "queued", match: undefined });
    pump();
  };
  /** The held file's tags go to the image the board has; the file is not sent. */
  const tagInstead = async (key: number, match: ImageDto) => {
    const job = held.current.get(key);
    if (!job) return;
    try {
      await sendJson("PATCH", `/api/v1/images/${encodeURIComponent(match.short_id)}/tags`, {
        add: job.tags,
      });
      held.current.delete(key);
      update(key, {
        state: "done",
        message: `Tags added to ${match.short_id}`,
        resolved: { href: `/i/${match.short_id}` },
      });
    } catch (err) {
      update(key, { message: err instanceof ApiError ? err.message : "Network error, try again" });
    }
  };

  const add = (files: Iterable<File>, tagText = tagsRef.current) => {
    const batchTags = parseTagText(tagText);
    const added: Item[] = [];
    for (const file of files) {
      const key = nextKey.current++;
      queue.current.push({ key, file, tags: batchTags });
      added.push({
        key,
        name: file.name || "Pasted image",
        size: file.size,
        progress: 0,
        state: "queued",
      });
    }
    if (!added.length) return;
    setItems((all) => [...added, ...all]);
    setTimeout(pump);
  };

  const shared = useSharedFiles(ready, setTags);

  useEffect(() => {
    // A share waits in the service worker's inbox while the person signs in (?shared=1 kept).
    if (!readToken()) return location.replace(loginHref(location.pathname + location.search));
    setReady(true);
    const onPaste = (e: ClipboardEvent) => {
      const files = [...(e.clipboardData?.files ?? [])].filter((f) => f.type.startsWith("image/"));
      if (files.length) (e.preventDefault(), add(files));
    };
    addEventListener("paste", onPaste);
    return () => removeEventListener("paste", onPaste);
  }, []);

  if (!ready) return <p class="muted">Checking sign-in…</p>;
  return (
    <div class="uploader">
      <SharedFiles state={shared} onSend={(files) => add(files, tagsRef.current)} />
      <label for="upload-tags">Tags for this batch (comma-separated)</label>
      <TagInput id="upload-tags" value={tags} onValue={setTags} placeholder="cat, surprised" />
      <label
        class={`dropzone${over ? " over" : ""}`}
        onDragOver={(e) => (e.preventDefault(), setOver(true))}
        onDragLeave={() => setOver(false)}
        onDrop={(e) => {
          e.preventDefault();
          setOver(false);
          add(e.dataTransfer?.files ?? []);
        }}
      >
        <span>Drop images here, paste them, or choose files</span>
        <input
          type="file"
          multiple
          accept={ACCEPT}
          onChange={(e) => (add(e.currentTarget.files ?? []), (e.currentTarget.value = ""))}
        />
      </label>
      <ul class="uploads" aria-live="polite">
        {items.map((it) => (
          <li key={it.key} class={it.state}>
            <span class="name">{it.name}</span> <span class="muted">{formatBytes(it.size)}</span>
            <progress max={1} value={it.progress} aria-label={`Upload of ${it.name}`} />
            <span class="result">
              {it.state === "queued"
                ? "Waiting"
                : it.state === "checking"
                ? "Checking the board…"
                : it.state === "uploading"
                ? "Uploading…"
                : it.state === "matched"
                ? "The board already has this image"
                : it.message}
              {it.shortId && !it.resolved && (
                <>
                  {" "}
                  <a href={`/i/${it.shortId}`}>View</a>
                </>
              )}
              {it.resolved?.href && (
                <>
                  {" "}
                  <a href={it.resolved.href}>View</a>
                </>
              )}
            </span>
            {it.state === "matched" && it.match && (
              <AlreadyHere
                match={it.match}
                tags={it.heldTags ?? []}
                onUpload={() => uploadAnyway(it.key)}
                onTag={() => tagInstead(it.key, it.match!)}
                message={it.message}
              />
            )}
            {it.caption && it.shortId && !it.resolved && (
              <LiveCaption shortId={it.shortId} initial={it.caption} />
            )}
            {it.similar && it.shortId && !it.resolved && (
              <LooksLike
                shortId={it.shortId}
                onResolved={(message, href) => update(it.key, { message, resolved: { href } })}
              />
            )}
          </li>
        ))}
      </ul>
    </div>
  );
}

/** A held file's row: the image the board has, with what to do instead of uploading. */
function AlreadyHere({ match, tags, onUpload, onTag, message }: {
  match: ImageDto;
  tags: string[];
  onUpload: () => void;
  onTag: () => void;
  message?: string;
}) {
  return (
    <div class="looks-like already-here">
      <a href={`/i/${match.short_id}`}>
        <img src={match.thumbnail_url} alt={`Image ${match.short_id}`} width={64} height={64} />
        Open it
      </a>
      {tags.length > 0 && <button type="button" onClick={onTag}>Add {tags.join(", ")} to it
      </button>}
      <button type="button" onClick={onUpload}>Upload anyway</button>
      {message && <span class="status">{message}</span>}
    </div>
  );
}
