/**
 * The mutation list (tests/mutants/mutants.json) and its checks: each entry names a file, an exact
 * `find` string that occurs exactly once in it (so line numbers never matter, and an entry whose
 * code moved fails loudly instead of testing nothing), its `replace`, and the test files that must
 * fail on the mutated code. Pure: tests/mutants/list_test.ts covers it; tests/mutants/run.ts runs it.
 */
import { z } from "zod";

/** One mutation: a small realistic bug, and the tests that should catch it. */
export const Mutation = z.object({
  /** Unique, kebab-case; what `deno task mutants <filter>` matches (with the file). */
  id: z.string().regex(/^[a-z0-9]+(-[a-z0-9]+)*$/),
  /** Repo-relative path of the file to mutate. */
  file: z.string().min(1).refine((p) => !p.startsWith("/") && !p.split("/").includes(".."), {
    message: "a repo-relative path",
  }),
  /** Exact text that occurs exactly once in `file`. */
  find: z.string().min(1),
  /** What replaces it. */
  replace: z.string(),
  /** The bug, in one line. */
  description: z.string().min(1),
  /** Repo-relative test files that must fail on the mutated code. */
  tests: z.array(z.string().min(1)).min(1),
  /** A `deno test --filter` (a test name, or `/regex/`) to run only the tests that matter. */
  filter: z.string().min(1).optional(),
  /** Seconds before the run is stopped and counted killed by timeout (default: the tool's). */
  timeout_s: z.number().int().positive().optional(),
}).strict().refine((m) => m.find !== m.replace, { message: "`replace` must differ from `find`" });

/** A mutation of the list. */
export type Mutation = z.infer<typeof Mutation>;

/** How often `needle` occurs in `text`, overlapping occurrences included. */
export function occurrences(text: string, needle: string): number {
  let n = 0;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) n++;
  return n;
}

/** `text` with the mutation's one `find` replaced (callers check it occurs exactly once). */
export function applyMutation(text: string, m: Pick<Mutation, "find" | "replace">): string {
  const at = text.indexOf(m.find);
  if (at === -1) throw new Error("the find string does not occur");
  return text.slice(0, at) + m.replace + text.slice(at + m.find.length);
}

/**
 * Parses the list and checks it against the files as `read` gives them (repo-relative path to
 * text, or null when missing): the shape, unique ids, every `find` exactly once, every test file
 * present. Returns the mutations and every problem found (all of them, not just the first).
 */
export function checkList(
  json: unknown,
  read: (path: string) => string | null,
): { mutations: Mutation[]; problems: string[] } {
  const parsed = z.array(Mutation).safeParse(json);
  if (!parsed.success) {
    return {
      mutations: [],
      problems: parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`),
    };
  }
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const m of parsed.data) {
    if (seen.has(m.id)) problems.push(`${m.id}: the id is used twice`);
    seen.add(m.id);
    const text = read(m.file);
    if (text === null) {
      problems.push(`${m.id}: ${m.file} does not exist`);
    } else {
      const n = occurrences(text, m.find);
      if (n !== 1) {
        problems.push(
          `${m.id}: the find string occurs ${n} times in ${m.file}, not once: ${
            JSON.stringify(m.find)
          }`,
        );
      }
    }
    for (const t of m.tests) {
      if (read(t) === null) problems.push(`${m.id}: test file ${t} does not exist`);
    }
  }
  return { mutations: parsed.data, problems };
}

/** The mutations whose id or file contains any of `filters` (all of them when none is given). */
export function selectMutations(mutations: Mutation[], filters: string[]): Mutation[] {
  if (!filters.length) return mutations;
  return mutations.filter((m) => filters.some((f) => m.id.includes(f) || m.file.includes(f)));
}

/** The names of the failing tests in `deno test` output, from its FAILURES section. */
export function failingTests(output: string): string[] {
  const lines = output.split("\n");
  const at = lines.findLastIndex((l) => l.trim() === "FAILURES");
  if (at === -1) return [];
  return lines.slice(at).map((l) => /^(.+) => \S+:\d+:\d+$/.exec(l.trim())?.[1])
    .filter((n): n is string => !!n);
}
