import SimilarPairs from "../islands/SimilarPairs.tsx";
import TagBrowser from "../islands/TagBrowser.tsx";
import { AppError } from "../domain/errors.ts";
import { MAX_TAG_QUERY_LENGTH } from "../domain/tag_names.ts";
import type { PageHandler } from "./_app.tsx";

const PAGE_SIZE = 500;

/** `/tags`: public tag browser, by image count, with a substring search. */
export const handler: PageHandler = async (c, { read, render }) => {
  const q = (c.req.query("q") ?? "").trim();
  // The API's cap: a long text costs the trigram search far more than it can find.
  if (q.length > MAX_TAG_QUERY_LENGTH) {
    throw new AppError("invalid_field", `q: at most ${MAX_TAG_QUERY_LENGTH} characters`);
  }
  const offset = Math.max(0, Math.min(1e6, Number.parseInt(c.req.query("offset") ?? "", 10) || 0));
  const tags = await read.listTags({
    q: q || undefined,
    sort: "count_desc",
    limit: PAGE_SIZE,
    offset,
  });
  return render(
    c,
    <>
      <h1>Tags</h1>
      <TagBrowser initial={tags} q={q} offset={offset} pageSize={PAGE_SIZE} />
      <SimilarPairs />
    </>,
    { title: "Tags" },
  );
};
