import { useEffect, useState } from "preact/hooks";
import { type KeptThumbnail, recentThumbnails } from "../client/offline_cache.ts";

/**
 * The library as the service worker can show it offline: the thumbnails of the images viewed
 * recently, from its cache (static/sw.js), and a plain statement that the board is offline.
 */
export default function OfflineLibrary() {
  const [kept, setKept] = useState<KeptThumbnail[] | null>(null);
  const [online, setOnline] = useState(true);
  useEffect(() => {
    setOnline(navigator.onLine);
    const update = () => setOnline(navigator.onLine);
    addEventListener("online", update);
    addEventListener("offline", update);
    recentThumbnails().then(setKept, () => setKept([]));
    return () => (removeEventListener("online", update), removeEventListener("offline", update));
  }, []);
  return (
    <section class="offline-library">
      <p role="status" class="offline-note">
        {online
          ? (
            <>
              The board could not be reached. <a href="/">Try again</a>
            </>
          )
          : "You are offline. These are the images you viewed recently; the rest of the board comes back when you are online."}
      </p>
      {kept !== null && kept.length === 0 && (
        <p class="empty">
          No images kept on this device yet.
        </p>
      )}
      <ul class="grid">
        {(kept ?? []).map((k) => (
          <li key={k.shortId}>
            <a href={`/i/${k.shortId}`}>
              <img src={k.url} alt={`Image ${k.shortId}`} loading="lazy" decoding="async" />
            </a>
          </li>
        ))}
      </ul>
    </section>
  );
}
