/** The link-preview tags of an image page: OpenGraph, Twitter card, and oEmbed discovery. */
import type { HeadTag } from "../adapters/islands/mod.ts";
import { altText } from "../client/ui.ts";
import type { ImageDto } from "../domain/types.ts";
import { shareLinks } from "../domain/share_links.ts";
import { oembedDiscoveryUrl, PROVIDER_NAME } from "../domain/oembed.ts";

/** The `<head>` tags that make `/i/{short_id}` unfurl as the image in chat clients. */
export function previewTags(origin: string, image: ImageDto): HeadTag[] {
  const links = shareLinks(origin, image);
  const title = altText(image);
  const og = (property: string, content: string | number): HeadTag => ({
    tag: "meta",
    attrs: { property, content: String(content) },
  });
  const named = (name: string, content: string): HeadTag => ({
    tag: "meta",
    attrs: { name, content },
  });
  const { preview, video } = links;
  const videoTags = video
    ? [
      og("og:video", video.url),
      og("og:video:type", video.type),
      og("og:video:width", video.width),
      og("og:video:height", video.height),
    ]
    : [];
  return [
    og("og:type", "website"),
    og("og:site_name", PROVIDER_NAME),
    og("og:title", title),
    og("og:url", links.page),
    og("og:image", preview.url),
    og("og:image:type", preview.type),
    og("og:image:width", preview.width),
    og("og:image:height", preview.height),
    og("og:image:alt", title),
    ...videoTags,
    named("twitter:card", "summary_large_image"),
    named("twitter:title", title),
    named("twitter:image", preview.url),
    named("twitter:image:alt", title),
    { tag: "link", attrs: { rel: "canonical", href: links.page } },
    {
      tag: "link",
      attrs: {
        rel: "alternate",
        type: "application/json+oembed",
        href: oembedDiscoveryUrl(origin, links.page),
        title,
      },
    },
  ];
}
