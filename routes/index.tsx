import Library from "../islands/Library.tsx";
import { parseTagList } from "../lib/ui.ts";
import type { PageHandler } from "./_app.tsx";

/** Images per page, on the server and in the island. */
export const PAGE_SIZE = 50;

/** `/`: the library, first page rendered here, later pages loaded by the island. */
export const handler: PageHandler = async (c, { read, render }) => {
  const tags = parseTagList(c.req.query("tags"));
  const cursor = c.req.query("cursor") || null;
  const page = await read.listImages({ tags, limit: PAGE_SIZE, cursor });
  const items = page.items.map((img) => ({
    short_id: img.short_id,
    thumbnail_url: img.thumbnail_url,
    width: img.width,
    height: img.height,
    tags: img.tags,
  }));
  const title = tags.length ? `Tagged ${tags.join(", ")}` : "Library";
  return render(
    c,
    <>
      <h1 class="visually-hidden">{title}</h1>
      <Library initial={{ items, next_cursor: page.next_cursor }} tags={tags} limit={PAGE_SIZE} />
    </>,
    { title, memo: page },
  );
};
