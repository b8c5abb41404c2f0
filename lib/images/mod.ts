/**
 * Images on their way in: what an upload goes through before it is an image of the board.
 *
 * - `sniff.ts`: the type and size from the first bytes (JPEG, PNG, GIF, WebP, AVIF; never SVG).
 * - `multipart.ts`: the upload form's parts.
 * - `ingest.ts`: sniff, refuse pixel bombs, hash, dedup, store the objects, write the row.
 * - `thumbnails/`: the WebP thumbnail (sharp) in a pool of workers; import it from there, so that
 *   what only reads never loads sharp.
 * - `thumbnail_backfill.ts`: thumbnails for images that have none.
 */
export {
  BusyError,
  ingestImage,
  type IngestOptions,
  type IngestResult,
  ShortIdTakenError,
  TooManyPixelsError,
} from "./ingest.ts";
export { multipartBoundary, MultipartParser, parseMultipart } from "./multipart.ts";
export { sniffImage, UnsupportedImageError } from "./sniff.ts";
