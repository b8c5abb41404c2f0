/**
 * Every object key and public URL is built here ("collect them all in one place").
 * Originals live at `images/{short_id}`, thumbnails at `thumbnails/{short_id}.webp`, the JPEG
 * renditions at `renditions/{short_id}/{preview,thumbnail}.jpg`, the MP4 of a moving image at
 * `renditions/{short_id}/video.mp4`.
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

/**
 * Key of the MP4 rendition of a moving image (issue 45: H.264, no sound, for chats and players),
 * made in the background after its upload (services/video_renditions.ts).
 */
export function videoRenditionKey(shortId: string): string {
  return `renditions/${shortId}/video.mp4`;
}

/** Key of the animated WebP preview of a moving image (issue 45), made with its MP4. */
export function previewKey(shortId: string): string {
  return `renditions/${shortId}/preview.webp`;
}

/** The animated preview's address: on the public base when there is one, else the API's route. */
export function previewUrl(publicBase: string | undefined, shortId: string): string {
  return publicBase
    ? publicUrl(publicBase, previewKey(shortId))
    : `/api/v1/images/${shortId}/preview`;
}

/** The MP4 rendition's address: on the public base when there is one, else the API's route. */
export function videoUrl(publicBase: string | undefined, shortId: string): string {
  return publicBase
    ? publicUrl(publicBase, videoRenditionKey(shortId))
    : `/api/v1/images/${shortId}/video.mp4`;
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
