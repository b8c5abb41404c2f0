/**
 * Statements whose text is built once per shape and then only given values (the caption search,
 * db/caption_search_statement.ts; the listings, db/images.ts). postgres.js builds a statement from
 * its tagged-template fragments on every call and has no way to reuse the text it built: for the
 * caption search some hundred fragments (each a Promise) rendered into 15 KB of text, several
 * times the client's CPU of a four-parameter `select`, most of which keeping the text saves
 * (bench/RESULTS.md#notes-moved-from-code-comments). Here the
 * fragments are plain objects, per-call values are named slots, and the text, rendered as
 * postgres.js renders it (every slot occurrence its own `$n`, in order), is kept per shape and
 * run with postgres.js's `unsafe(text, values, { prepare: true })`.
 */

import type postgres from "postgres";
import type { Sql } from "./client.ts";

/** A value given per call: `name` picks it from the call's values. */
export class Slot<K extends string = string> {
  constructor(readonly name: K) {}
}

/** SQL text written into the statement as is (constants of the statement's shape only). */
export class Raw {
  constructor(readonly text: string) {}
}

/** A piece of a statement. */
export class Piece {
  constructor(readonly strings: readonly string[], readonly parts: readonly Part[]) {}
}

export type Part = Piece | Raw | Slot;

/** Writes a piece: `q\`select ${slot}\``. Only pieces, raw text and slots go in. */
export function q(strings: TemplateStringsArray, ...parts: Part[]): Piece {
  for (const p of parts) {
    if (!(p instanceof Piece || p instanceof Raw || p instanceof Slot)) {
      throw new TypeError(`a statement piece takes pieces, raw text and slots, not ${typeof p}`);
    }
  }
  return new Piece(strings, parts);
}

/** Constant text of the statement's shape, such as a cost or a column list. */
export const raw = (text: string) => new Raw(text);

/**
 * A fragment shared with postgres.js statements (db/images.ts COLUMNS, db/tags.ts meantTagIds),
 * written with `q`: such a function only calls the template tag it is given, with the pieces and
 * slots it is given, so what it returns is a piece.
 */
export function viaSql(fragment: (sql: Sql) => unknown): Piece {
  const piece = fragment(q as unknown as Sql);
  if (!(piece instanceof Piece)) {
    throw new TypeError("a shared fragment must call the tag it is given");
  }
  return piece;
}

/** A piece's text with `$1`, `$2`, … for its slots in order, and the slots in that order. */
export function render(piece: Piece): { text: string; slots: Slot[] } {
  const slots: Slot[] = [];
  const walk = (p: Piece): string => {
    let text = p.strings[0];
    p.parts.forEach((part, i) => {
      if (part instanceof Piece) text += walk(part);
      else if (part instanceof Raw) text += part.text;
      else text += `$${slots.push(part)}`;
      text += p.strings[i + 1];
    });
    return text;
  };
  return { text: walk(piece), slots };
}

/**
 * Statements rendered by shape from one builder, each on first use, then run with each call's
 * values. Bounded: a caller's shapes are few (the caption search has at most 64), and past `max`
 * the oldest is dropped.
 */
export class StatementCache<S, K extends string> {
  readonly #byShape = new Map<string, { text: string; slots: Slot<K>[] }>();
  constructor(private readonly build: (shape: S) => Piece, readonly max = 256) {}

  /** The text of `shape`'s statement and `values` in its slots' order. */
  get(shape: S, values: Record<K, unknown>): { text: string; params: unknown[] } {
    const key = JSON.stringify(shape);
    let hit = this.#byShape.get(key);
    if (!hit) {
      hit = render(this.build(shape)) as { text: string; slots: Slot<K>[] };
      if (this.#byShape.size >= this.max) {
        this.#byShape.delete(this.#byShape.keys().next().value!);
      }
      this.#byShape.set(key, hit);
    }
    return { text: hit.text, params: hit.slots.map((s) => values[s.name]) };
  }

  /** `shape`'s statement with `values`, as a prepared statement on `sql`. */
  query<T extends postgres.Row[]>(
    sql: Sql | postgres.TransactionSql,
    shape: S,
    values: Record<K, unknown>,
  ): postgres.PendingQuery<T> {
    const { text, params } = this.get(shape, values);
    return sql.unsafe<T>(text, params as never[], { prepare: true });
  }

  /** Shapes kept. */
  get size(): number {
    return this.#byShape.size;
  }
}
