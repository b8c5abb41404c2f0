/**
 * Sharing out of the board through the phone's share sheet (Web Share API): the original file
 * itself where the browser can share files (so a GIF arrives animated in a chat), else its link.
 * Browser-only.
 */

/** What the share sheet can take here: files, only links, or nothing (no share button). */
export type ShareSupport = "files" | "link" | "none";

/** What this browser can share; `probe` is a file of the type to be shared. */
export function shareSupport(probe: File): ShareSupport {
  if (typeof navigator.share !== "function") return "none";
  if (typeof navigator.canShare === "function" && navigator.canShare({ files: [probe] })) {
    return "files";
  }
  return "link";
}

/** The image to share: where to fetch its original, its file name and type, and its link. */
export interface Shareable {
  /** A same-origin path of the original bytes (the direct link's path). */
  path: string;
  name: string;
  type: string;
  /** The link shared when files cannot be (a path is taken as on this page's origin). */
  link: string;
}

/**
 * Opens the share sheet with the original file (fetched from `path`) when files can be shared,
 * else with the link. Resolves false when the person closed the sheet; other failures throw.
 */
export async function shareImage(item: Shareable): Promise<boolean> {
  try {
    if (shareSupport(new File([], item.name, { type: item.type })) === "files") {
      const res = await fetch(item.path);
      if (!res.ok) throw new Error(`the image could not be fetched (${res.status})`);
      const file = new File([await res.blob()], item.name, { type: item.type });
      await navigator.share({ files: [file] });
    } else {
      await navigator.share({ url: new URL(item.link, location.href).href });
    }
    return true;
  } catch (err) {
    if ((err as Error)?.name === "AbortError") return false;
    throw err;
  }
}
