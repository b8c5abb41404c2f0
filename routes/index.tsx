import Library from "../islands/Library.tsx";
import { AppError } from "../domain/errors.ts";
import { filterTerms, parseTagFilter } from "../domain/tag_names.ts";
import { MAX_QUERY_CHARS } from "../domain/caption_text.ts";
import { libraryHref } from "../client/ui.ts";
import type { PageHandler } from "./_app.tsx";

/** Images per page, on the server and in the island. */
export const PAGE_SIZE = 50;

/**
 * `/`: the library, first page rendered here, later pages loaded by the island. Tags are parsed
 * as the API parses them (`-name` excludes; at most 50, valid names; else the 400 page), `q`
 * searches the words on the images (capped like the API's), and the page is kept under its
 * canonical address: what it shows depends on the tags, the words, the order and the cursor,
 * nothing else.
 * The search field sends `?search=` (it works without scripts): its tags and words are told apart
 * (domain/search_text.ts) and the browser is sent to the canonical address.
 */
export const handler: PageHandler = async (c, { read, render, publicBaseUrl }) => {
  const search = c.req.query("search");
  if (search !== undefined) {
    const split = await read.splitSearch(search.slice(0, 2 * MAX_QUERY_CHARS));
    return c.redirect(libraryHref(split.tags, split.q.slice(0, MAX_QUERY_CHARS)), 303);
  }
  const filter = parseTagFilter(c.req.queries("tags") ?? []);
  const tags = filterTerms(filter); // exclusions as `-name`
  const q = (c.req.query("q") ?? "").trim();
  // The API's cap (the problem page, like a bad tag or cursor).
  if (q.length > MAX_QUERY_CHARS) {
    throw new AppError("invalid_field", `q: at most ${MAX_QUERY_CHARS} characters`);
  }
  const cursor = c.req.query("cursor") || null;
  // `?uploader=name`: that person's uploads (the image page's "uploaded by" links here).
  const uploader = (c.req.query("uploader") ?? "").trim().toLowerCase().slice(0, 64);
  // `?sort=relevance`: the best match first, offered when there are words (issue 43).
  const sort = c.req.query("sort") === "relevance" && q ? "relevance" : "newest";
  const page = await read.listImages({
    tags: filter.include,
    exclude: filter.exclude,
    q: q || null,
    uploader: uploader || null,
    sort,
    limit: PAGE_SIZE,
    cursor,
  });
  const items = page.items.map((img) => ({
    short_id: img.short_id,
    content_type: img.content_type,
    thumbnail_url: img.thumbnail_url,
    preview_url: img.preview_url,
    width: img.width,
    height: img.height,
    tags: img.tags,
    text: img.text,
  }));
  const described = [...tags, ...(q ? [`“${q}”`] : []), ...(uploader ? [`by ${uploader}`] : [])];
  const title = described.length ? `Search: ${described.join(", ")}` : "Library";
  return render(
    c,
    <>
      <h1 class="visually-hidden">{title}</h1>
      <Library
        initial={{ items, next_cursor: page.next_cursor }}
        tags={tags}
        q={q}
        uploader={uploader}
        sort={sort}
        limit={PAGE_SIZE}
        publicBaseUrl={publicBaseUrl}
      />
    </>,
    { title, memo: page, path: libraryHref(tags, q, cursor, uploader, sort) },
  );
};
