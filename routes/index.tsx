import Library from "../islands/Library.tsx";
import { filterTerms, parseTagFilter } from "../lib/tags/names.ts";
import { libraryHref } from "../lib/ui.ts";
import type { PageHandler } from "./_app.tsx";

/** Images per page, on the server and in the island. */
export const PAGE_SIZE = 50;

/**
 * `/`: the library, first page rendered here, later pages loaded by the island. Tags are parsed
 * as the API parses them (`-name` excludes; at most 50, valid names; else the 400 page), and the page is kept under
 * its canonical address: what it shows depends on the tags and the cursor, nothing else.
 */
export const handler: PageHandler = async (c, { read, render, publicBaseUrl }) => {
  const filter = parseTagFilter(c.req.queries("tags") ?? []);
  const tags = filterTerms(filter); // exclusions as `-name`
  const cursor = c.req.query("cursor") || null;
  const page = await read.listImages({
    tags: filter.include,
    exclude: filter.exclude,
    limit: PAGE_SIZE,
    cursor,
  });
  const items = page.items.map((img) => ({
    short_id: img.short_id,
    content_type: img.content_type,
    thumbnail_url: img.thumbnail_url,
    width: img.width,
    height: img.height,
    tags: img.tags,
  }));
  const title = tags.length ? `Tagged ${tags.join(", ")}` : "Library";
  const base = libraryHref(tags);
  const path = cursor
    ? `${base}${tags.length ? "&" : "?"}cursor=${encodeURIComponent(cursor)}`
    : base;
  return render(
    c,
    <>
      <h1 class="visually-hidden">{title}</h1>
      <Library
        initial={{ items, next_cursor: page.next_cursor }}
        tags={tags}
        limit={PAGE_SIZE}
        publicBaseUrl={publicBaseUrl}
      />
    </>,
    { title, memo: page, path },
  );
};
