/**
 * Sharing into chats: the addresses meant for others and what previews say about an image.
 *
 * - `base_url.ts`: PUBLIC_BASE_URL's rules.
 * - `origin.ts`: the origin of shared links (PUBLIC_BASE_URL, or the request's own).
 * - `links.ts`: direct links `/{short_id}.{ext}`, page links, Markdown and HTML snippets (islands
 *   import this file alone).
 * - `oembed.ts`: the oEmbed `photo` answer and its scaling to maxwidth/maxheight.
 * - `meta.ts`: OpenGraph and Twitter card tags, and the oEmbed discovery link.
 */
export { parsePublicBaseUrl } from "./base_url.ts";
export { originOf, type OriginSettings, originSettings, resolveOrigin } from "./origin.ts";
export {
  directPath,
  extensionOf,
  htmlOf,
  markdownOf,
  pagePath,
  parseDirectName,
  PREVIEW_MAX_BYTES,
  type ShareLinks,
  shareLinks,
} from "./links.ts";
export {
  fitWithin,
  OEMBED_CACHE_AGE,
  type OEmbedPhoto,
  oembedPhoto,
  PROVIDER_NAME,
  shortIdOfUrl,
} from "./oembed.ts";
export { previewTags } from "./meta.ts";
