import { useEffect, useRef, useState } from "preact/hooks";
import { TagRulesEditor } from "../components/TagRulesEditor.tsx";
import { apiJson, useToken } from "../client/api_client.ts";
import type { TagAliasDto, TagDto, TagImplicationDto } from "../domain/types.ts";
import { libraryHref } from "../client/ui.ts";

/** The rules shown: the first RULES_SHOWN aliases and implying tags. */
const RULES_SHOWN = 1000;

/** Props: the first page of tags (by count) for the search text `q`. */
export interface TagBrowserProps {
  initial: TagDto[];
  q: string;
  offset: number;
  pageSize: number;
}

/**
 * All tags by image count with a substring search; each tag opens the filtered library and shows
 * its aliases and implications. Signed in, the rules can be edited below the list.
 */
export default function TagBrowser(props: TagBrowserProps) {
  const { initial, pageSize } = props;
  const token = useToken();
  const [aliases, setAliases] = useState<TagAliasDto[]>([]);
  const [implications, setImplications] = useState<TagImplicationDto[]>([]);
  const [base, setBase] = useState(props.offset);
  const [q, setQ] = useState(props.q);
  const [tags, setTags] = useState(initial);
  const [more, setMore] = useState(initial.length === pageSize);
  const [error, setError] = useState(false);
  const seq = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout>>();

  const fetchTags = async (text: string, offset: number) => {
    const mine = ++seq.current;
    const params = new URLSearchParams({
      sort: "count_desc",
      limit: String(pageSize),
      offset: String(offset),
    });
    if (text) params.set("q", text);
    try {
      const page = await apiJson<TagDto[]>(`/api/v1/tags?${params}`);
      if (mine !== seq.current) return;
      if (!offset) setBase(0);
      setTags((old) => offset ? [...old, ...page] : page);
      setMore(page.length === pageSize);
      setError(false);
    } catch {
      if (mine === seq.current) setError(true);
    }
  };

  const loadRules = async () => {
    const page = `limit=${RULES_SHOWN}`;
    const [a, i] = await Promise.all([
      apiJson<TagAliasDto[]>(`/api/v1/tag-aliases?${page}`),
      apiJson<TagImplicationDto[]>(`/api/v1/tag-implications?${page}`),
    ]).catch(() => [[], []]);
    setAliases(a);
    setImplications(i);
  };

  useEffect(() => {
    loadRules();
    return () => clearTimeout(timer.current);
  }, []);

  const aliasesOf = new Map<string, string[]>();
  for (const a of aliases) aliasesOf.set(a.target, [...aliasesOf.get(a.target) ?? [], a.alias]);
  const impliesOf = new Map(implications.map((i) => [i.tag, i.implies]));

  const onSearch = (text: string) => {
    setQ(text);
    clearTimeout(timer.current);
    timer.current = setTimeout(() => {
      history.replaceState(
        null,
        "",
        text.trim() ? `/tags?q=${encodeURIComponent(text.trim())}` : "/tags",
      );
      fetchTags(text.trim(), 0);
    }, 150);
  };

  return (
    <section class="tag-browser">
      <form
        class="filter"
        action="/tags"
        method="get"
        role="search"
        onSubmit={(e) => e.preventDefault()}
      >
        <label for="tag-search">Search tags</label>
        <input
          id="tag-search"
          name="q"
          type="search"
          autocomplete="off"
          maxLength={64}
          value={q}
          onInput={(e) => onSearch(e.currentTarget.value)}
        />
      </form>
      {error && <p role="alert">Could not load tags.</p>}
      {tags.length === 0
        ? <p class="empty">No tags{q.trim() ? ` matching “${q.trim()}”` : " yet"}.</p>
        : (
          <ul class="tag-list">
            {tags.map((tag) => (
              <li key={tag.name}>
                <a href={libraryHref([tag.name])}>
                  {tag.name} <span class="count">{tag.image_count}</span>
                </a>
                {aliasesOf.has(tag.name) && (
                  <span class="rule">also {aliasesOf.get(tag.name)!.join(", ")}</span>
                )}
                {impliesOf.has(tag.name) && (
                  <span class="rule">implies {impliesOf.get(tag.name)!.join(", ")}</span>
                )}
              </li>
            ))}
          </ul>
        )}
      {more && (
        <a
          class="button"
          href={`/tags?${new URLSearchParams({ q: q.trim(), offset: String(base + tags.length) })}`}
          onClick={(e) => (e.preventDefault(), fetchTags(q.trim(), base + tags.length))}
        >
          Show more tags
        </a>
      )}
      {token && (
        <TagRulesEditor
          aliases={aliases}
          implications={implications}
          onChanged={() => (loadRules(), fetchTags(q.trim(), 0))}
        />
      )}
    </section>
  );
}
