import { useEffect, useRef, useState } from "preact/hooks";
import { type Caption, LiveCaption } from "../components/CaptionText.tsx";
import { LooksLike } from "../components/LooksLike.tsx";
import { TagInput } from "../components/TagInput.tsx";
import { readToken, uploadImage, type UploadResult } from "../client/api_client.ts";
import { formatBytes, loginHref, parseTagText } from "../client/ui.ts";

const ACCEPT = "image/jpeg,image/png,image/gif,image/webp,image/avif";
const PARALLEL = 2;

interface Item {
  key: number;
  name: string;
  size: number;
  progress: number;
  state: "queued" | "uploading" | "done" | "failed";
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

/** Upload several images by drop, picker or paste; one request per file with progress. */
export default function Uploader() {
  const [ready, setReady] = useState(false);
  const [tags, setTags] = useState("");
  const [items, setItems] = useState<Item[]>([]);
  const [over, setOver] = useState(false);
  const queue = useRef<{ key: number; file: File; tags: string[] }[]>([]);
  const running = useRef(0);
  const nextKey = useRef(0);
  const tagsRef = useRef(tags);
  tagsRef.current = tags;

  const update = (key: number, patch: Partial<Item>) =>
    setItems((all) => all.map((it) => it.key === key ? { ...it, ...patch } : it));

  const pump = () => {
    while (running.current < PARALLEL && queue.current.length) {
      const job = queue.current.shift()!;
      running.current++;
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

  const add = (files: Iterable<File>) => {
    const batchTags = parseTagText(tagsRef.current);
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

  useEffect(() => {
    if (!readToken()) return location.replace(loginHref("/upload"));
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
                : it.state === "uploading"
                ? "Uploading…"
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
