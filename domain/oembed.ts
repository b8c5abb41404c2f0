/** oEmbed (https://oembed.com) for an image: a `photo` response, scaled to the consumer's bounds. */
import type { ImageDto } from "./types.ts";
import { altText, type PreviewImage, shareLinks, shortIdOfPath } from "./share_links.ts";

/** The site's name in previews and oEmbed. */
export const PROVIDER_NAME = "Reactions";

/** How long a consumer may keep an oEmbed answer (seconds): tags, and so the title, may change. */
export const OEMBED_CACHE_AGE = 3600;

/** A `photo` response (oEmbed 1.0, section 2.3.4), with the optional thumbnail. */
export interface OEmbedPhoto {
  version: "1.0";
  type: "photo";
  url: string;
  width: number;
  height: number;
  title: string;
  provider_name: string;
  provider_url: string;
  cache_age: number;
  thumbnail_url: string;
  thumbnail_width: number;
  thumbnail_height: number;
}

/**
 * `width` x `height` scaled down, aspect ratio kept, to fit `maxWidth` and `maxHeight` (either
 * may be absent); never enlarged, each side at least 1.
 */
export function fitWithin(
  size: { width: number; height: number },
  maxWidth?: number,
  maxHeight?: number,
): { width: number; height: number } {
  const scale = Math.min(
    1,
    maxWidth ? maxWidth / size.width : 1,
    maxHeight ? maxHeight / size.height : 1,
  );
  if (scale >= 1) return { width: size.width, height: size.height };
  return {
    width: Math.max(1, Math.floor(size.width * scale)),
    height: Math.max(1, Math.floor(size.height * scale)),
  };
}

/**
 * The short ID an oEmbed `url` names on this site, or null when the URL is not one of this site's
 * image pages or direct links. The scheme may differ (a link shared as http:// is still ours);
 * the host and port must be `origin`'s.
 */
export function shortIdOfUrl(
  url: string,
  origin: string,
): { shortId: string; ext?: string } | null {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return null;
  }
  const own = new URL(origin);
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") return null;
  if (parsed.host !== own.host || parsed.username || parsed.password) return null;
  return shortIdOfPath(parsed.pathname);
}

/** The oEmbed answer for `image` on `origin`, within the consumer's `maxwidth`/`maxheight`. */
export function oembedPhoto(
  origin: string,
  image: ImageDto,
  bounds: { maxwidth?: number; maxheight?: number } = {},
): OEmbedPhoto {
  const links = shareLinks(origin, image);
  const fit = (p: PreviewImage) => fitWithin(p, bounds.maxwidth, bounds.maxheight);
  const photo = fit(links.preview);
  const thumb = fit(links.thumbnail);
  return {
    version: "1.0",
    type: "photo",
    url: links.preview.url,
    width: photo.width,
    height: photo.height,
    title: altText(image),
    provider_name: PROVIDER_NAME,
    provider_url: `${origin}/`,
    cache_age: OEMBED_CACHE_AGE,
    thumbnail_url: links.thumbnail.url,
    thumbnail_width: thumb.width,
    thumbnail_height: thumb.height,
  };
}

/** The oEmbed discovery URL of an image page (`<link rel="alternate" ...>`). */
export function oembedDiscoveryUrl(origin: string, pageUrl: string): string {
  return `${origin}/api/v1/oembed?url=${encodeURIComponent(pageUrl)}&format=json`;
}
