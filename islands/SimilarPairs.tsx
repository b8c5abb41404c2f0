import { useState } from "preact/hooks";
import { ApiError, apiJson, useToken } from "../client/api_client.ts";
import type { ImageDto } from "../domain/types.ts";
import { altText } from "../client/ui.ts";

interface Pair {
  a: ImageDto;
  b: ImageDto;
  distance: number;
  shared_tags: number;
}

const PAGE = 50;

/**
 * "Possible duplicates" on the tags page, for cleaning up: pairs of near-duplicates, most shared
 * tags first. Signed in, "Keep this" merges the other image's tags into it and deletes the other.
 */
export default function SimilarPairs() {
  const token = useToken();
  const [pairs, setPairs] = useState<Pair[] | null>(null);
  const [message, setMessage] = useState("");
  const [busy, setBusy] = useState(false);

  const load = async () => {
    setBusy(true);
    try {
      setPairs((await apiJson<{ items: Pair[] }>(`/api/v1/duplicates?limit=${PAGE}`)).items);
    } catch {
      setMessage("Could not load the possible duplicates");
    } finally {
      setBusy(false);
    }
  };
  const keep = async (kept: ImageDto, dropped: ImageDto) => {
    setBusy(true);
    try {
      await apiJson(
        `/api/v1/images/${encodeURIComponent(dropped.short_id)}/merge-into/${
          encodeURIComponent(kept.short_id)
        }`,
        { method: "POST" },
      );
      setMessage(`Merged ${dropped.short_id} into ${kept.short_id}`);
      const gone = dropped.short_id;
      setPairs((all) => all?.filter((p) => p.a.short_id !== gone && p.b.short_id !== gone) ?? []);
    } catch (err) {
      setMessage(err instanceof ApiError ? err.message : "Network error, not merged");
    } finally {
      setBusy(false);
    }
  };

  const side = (image: ImageDto, other: ImageDto) => (
    <div class="side">
      <a href={`/i/${image.short_id}`}>
        <img src={image.thumbnail_url} alt={altText(image)} width={120} height={120} />
      </a>
      {token && (
        <button type="button" disabled={busy} onClick={() => keep(image, other)}>
          Keep this, merge the other
        </button>
      )}
    </div>
  );

  return (
    <section class="duplicates" aria-labelledby="duplicates-heading">
      <h2 id="duplicates-heading">Possible duplicates</h2>
      {pairs === null
        ? (
          <button type="button" disabled={busy} onClick={load}>
            Show possible duplicates
          </button>
        )
        : pairs.length === 0
        ? <p class="muted">No possible duplicates.</p>
        : (
          <ul>
            {pairs.map((p) => (
              <li key={`${p.a.short_id}-${p.b.short_id}`}>
                {side(p.a, p.b)}
                {side(p.b, p.a)}
                <span class="muted">
                  {p.shared_tags} shared {p.shared_tags === 1 ? "tag" : "tags"}, {p.distance}{" "}
                  bits apart
                </span>
              </li>
            ))}
          </ul>
        )}
      <p role="status" class="status">{message}</p>
    </section>
  );
}
