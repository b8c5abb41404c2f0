/**
 * The size of a thumbnail, known without making one (sharp-free, so what only reads can use it:
 * link previews and oEmbed describe the thumbnail without loading it).
 */

/** Longest side of a thumbnail in pixels. */
export const THUMBNAIL_MAX_SIDE = 400;

/** Longest side of the JPEG preview chat clients show (issue 43). */
export const PREVIEW_MAX_SIDE = 1280;

/**
 * The width and height sharp gives an image of `width` x `height` resized with `fit: "inside"`
 * to `maxSide` (never enlarged, aspect ratio kept, each side at least 1).
 */
export function thumbnailSize(
  width: number,
  height: number,
  maxSide = THUMBNAIL_MAX_SIDE,
): { width: number; height: number } {
  const scale = Math.min(1, maxSide / Math.max(width, height));
  return {
    width: Math.max(1, Math.round(width * scale)),
    height: Math.max(1, Math.round(height * scale)),
  };
}
