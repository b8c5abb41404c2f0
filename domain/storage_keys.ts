/**
 * Every object key and public URL is built here ("collect them all in one place").
 * Originals live at `images/{short_id}`, thumbnails at `thumbnails/{short_id}.webp`, the JPEG
 * renditions at `renditions/{short_id}/{preview,thumbnail}.jpg`.
 */

/** Key of an image's original. */
export function originalKey(shortId: string): string {
  return `images/${shortId}`;
}

/** Key of an image's WebP thumbnail. */
export function thumbnailKey(shortId: string): string {
  return `thumbnails/${shortId}.webp`;
}

/** The JPEG renditions chat clients fetch (issue 43): `preview` (≤ 1280 px), `thumbnail` (≤ 400). */
export type RenditionKind = "preview" | "thumbnail";

/** Key of an image's JPEG rendition, made at its first request (services/renditions.ts). */
export function renditionKey(shortId: string, kind: RenditionKind): string {
  return `renditions/${shortId}/${kind}.jpg`;
}

/** Keys used before revision 003, when images were addressed by UUID. */
export const legacyKeys = {
  original: (uuid: string) => `images/${uuid}`,
  thumbnail: (uuid: string) => `thumbnails/${uuid}.webp`,
};

/** Public base (already trimmed by the config) joined with a key: exactly one slash between. */
export function publicUrl(base: string, key: string): string {
  return `${base.replace(/\/$/, "")}/${key.replace(/^\/+/, "")}`;
}

/** The two addresses of an image, following SPEC's rules for `file_url` and `thumbnail_url`. */
export function imageUrls(
  publicBase: string | undefined,
  image: { short_id: string; thumbnail_key: string | null },
): { file_url: string; thumbnail_url: string } {
  const original = originalKey(image.short_id);
  if (publicBase) {
    return {
      file_url: publicUrl(publicBase, original),
      // With no thumbnail, the thumbnail address is what the thumbnail route serves: the original.
      thumbnail_url: publicUrl(publicBase, image.thumbnail_key ?? original),
    };
  }
  const base = `/api/v1/images/${image.short_id}`;
  return { file_url: `${base}/file`, thumbnail_url: `${base}/thumbnail` };
}
