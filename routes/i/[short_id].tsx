import Caption from "../../islands/Caption.tsx";
import ImageControls from "../../islands/ImageControls.tsx";
import PrevNext from "../../islands/PrevNext.tsx";
import SimilarImages from "../../islands/SimilarImages.tsx";
import { directPath, isVideoType, shareLinks } from "../../domain/share_links.ts";
import { previewTags } from "../_preview_tags.ts";
import { altText, formatBytes, formatDate, formatType, libraryHref } from "../../client/ui.ts";
import type { ImageDto } from "../../domain/types.ts";
import type { PageHandler } from "../_app.tsx";
import { notFoundPage } from "../_404.tsx";

const SHORT_ID = /^[0-9A-Za-z]{8}$/;

/** The page's meta description: the image's type, tags and the start of its caption. */
function describeImage(image: ImageDto): string {
  const tags = image.tags.map((t) => t.name).join(", ");
  const text = (image.text ?? "").trim();
  return `A reaction image (${formatType(image.content_type)})` + (tags ? ` tagged ${tags}` : "") +
    (text ? `, reading “${text.length > 120 ? `${text.slice(0, 119)}…` : text}”` : "") + ".";
}

/** `/i/:short_id`: one image, its facts, tags, copy buttons and (signed in) write controls. */
export const handler: PageHandler = async (c, ctx) => {
  const id = c.req.param("short_id") ?? "";
  const image = SHORT_ID.test(id) ? await ctx.read.getImage(id) : null;
  if (!image) return notFoundPage(c, ctx);
  const alt = altText(image);
  const origin = ctx.origin(c);
  const share = { direct: shareLinks(origin, image).direct, directPath: directPath(image) };
  return ctx.render(
    c,
    <>
      <PrevNext shortId={image.short_id} />
      <article class="detail">
        <h1 class="visually-hidden">Image {image.short_id}</h1>
        <figure>
          {isVideoType(image.content_type)
            ? (
              // Muted and looping like a GIF, with controls (sound is in the original); never
              // started by itself, so a reader who prefers reduced motion sees the poster.
              <video
                src={image.file_url}
                poster={image.thumbnail_url}
                width={image.width}
                height={image.height}
                aria-label={alt}
                controls
                muted
                loop
                playsinline
                preload="metadata"
              />
            )
            : (
              <a href={image.file_url}>
                <img src={image.file_url} width={image.width} height={image.height} alt={alt} />
              </a>
            )}
        </figure>
        <div class="facts">
          <dl>
            <dt>Dimensions</dt>
            <dd>{image.width} × {image.height} px</dd>
            <dt>Size</dt>
            <dd>{formatBytes(image.size_bytes)}</dd>
            <dt>Type</dt>
            <dd>{formatType(image.content_type)}</dd>
            <dt>Added</dt>
            <dd>
              <time datetime={image.created_at}>{formatDate(image.created_at)}</time>
            </dd>
            {image.uploaded_by && (
              <>
                <dt>Uploaded by</dt>
                <dd>
                  <a href={libraryHref([], "", null, image.uploaded_by)}>{image.uploaded_by}</a>
                </dd>
              </>
            )}
          </dl>
          <Caption
            shortId={image.short_id}
            initial={{ text: image.text, text_source: image.text_source }}
          />
          <ImageControls image={image} share={share} />
        </div>
        <SimilarImages shortId={image.short_id} />
      </article>
    </>,
    {
      title: alt === "Untagged image" ? `Image ${image.short_id}` : alt,
      // Link previews: crawlers read these (Discordbot sends no Accept; any Accept gets HTML).
      head: previewTags(origin, image),
      description: describeImage(image),
    },
  );
};
