import type { Ref } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { apiJson } from "../client/api_client.ts";
import type { TagSuggestion } from "../domain/types.ts";

/** Props of the tag input. */
export interface TagInputProps {
  id: string;
  name?: string;
  value: string;
  onValue: (value: string) => void;
  placeholder?: string;
  inputRef?: Ref<HTMLInputElement>;
  disabled?: boolean;
}

/**
 * A text input of comma-separated tags with autocomplete for the last one, from
 * `GET /api/v1/tags/suggest?q=&limit=10` (an ARIA combobox: arrows, Enter, Escape). Requests are
 * debounced and an answer to an older text is dropped. A term typed as `-name` (an exclusion in
 * a filter) is completed as one; a match on an alias shows the alias and inserts its target.
 * Used inside islands; the label is the caller's (`<label for={id}>`).
 */
export function TagInput(props: TagInputProps) {
  const { id, value, onValue } = props;
  const [options, setOptions] = useState<TagSuggestion[]>([]);
  const [active, setActive] = useState(-1);
  const [open, setOpen] = useState(false);
  const seq = useRef(0);
  const timer = useRef<ReturnType<typeof setTimeout>>();
  const listId = `${id}-options`;
  const head = value.slice(0, value.lastIndexOf(",") + 1);
  const last = value.slice(head.length).trim();

  useEffect(() => () => clearTimeout(timer.current), []);

  const suggest = (text: string) => {
    clearTimeout(timer.current);
    const query = text.slice(text.lastIndexOf(",") + 1).trim();
    const mine = ++seq.current;
    if (!query) return setOpen(false);
    timer.current = setTimeout(async () => {
      const q = new URLSearchParams({ q: query, limit: "10" });
      const tags = await apiJson<TagSuggestion[]>(`/api/v1/tags/suggest?${q}`).catch(() => []);
      if (mine !== seq.current) return;
      setOptions(tags);
      setActive(-1);
      setOpen(tags.length > 0);
    }, 120);
  };

  const pick = (tag: TagSuggestion) => {
    seq.current++;
    onValue(`${head}${head ? " " : ""}${tag.name}, `);
    setOpen(false);
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      e.preventDefault();
      if (!open) return suggest(value);
      const next = active + (e.key === "ArrowDown" ? 1 : -1);
      setActive(next >= options.length ? -1 : next < -1 ? options.length - 1 : next);
    } else if (e.key === "Enter" && open && active >= 0 && options[active]) {
      e.preventDefault();
      pick(options[active]);
    } else if (e.key === "Escape" && open) {
      e.preventDefault();
      setOpen(false);
    }
  };

  const shown = open && last !== "";
  return (
    <div class="combo">
      <input
        id={id}
        name={props.name}
        ref={props.inputRef}
        type="text"
        autocomplete="off"
        spellcheck={false}
        role="combobox"
        aria-autocomplete="list"
        aria-expanded={shown}
        aria-controls={listId}
        aria-activedescendant={shown && active >= 0 ? `${listId}-${active}` : undefined}
        placeholder={props.placeholder}
        disabled={props.disabled}
        value={value}
        onInput={(e) => {
          const text = e.currentTarget.value;
          onValue(text);
          suggest(text);
        }}
        onKeyDown={onKeyDown}
        onBlur={() => setOpen(false)}
      />
      <ul id={listId} role="listbox" class="combo-list" hidden={!shown}>
        {shown && options.map((tag, i) => (
          <li
            key={tag.name}
            id={`${listId}-${i}`}
            role="option"
            aria-selected={i === active}
            onMouseDown={(e) => {
              e.preventDefault();
              pick(tag);
            }}
          >
            <span>{tag.name}</span>
            {tag.alias && <span class="alias">(alias {tag.alias})</span>}{" "}
            <span class="count">{tag.image_count}</span>
          </li>
        ))}
      </ul>
    </div>
  );
}
