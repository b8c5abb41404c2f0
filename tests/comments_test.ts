/**
 * Comments in product code state invariants and point at evidence (a test name, a bench row, a
 * bench/RESULTS.md anchor); the figures of particular runs belong in bench/RESULTS.md or a commit
 * body. This test reads every comment of the product folders and fails on a measured figure: a
 * decimal or a range with a unit, a before -> after pair, a decimal ratio, a rate, or a statistic
 * word (median, p50, p95, p99, measured) followed by a number. A constant stated with its unit
 * ("64 KiB", "2 ms", "20 MiB") is the invariant itself and passes.
 */
import assert from "node:assert/strict";

/** The folders of product code (tests/ and bench/ carry their figures by design). */
const PRODUCT = [
  "api",
  "db",
  "domain",
  "services",
  "adapters",
  "client",
  "wiring",
  "routes",
  "islands",
  "components",
];

/**
 * Files whose figures are still to move, each with the reason. The list only shrinks: a listed
 * file without figures fails the test too, so that it leaves the list once it is clean.
 */
const PENDING: Record<string, string> = {};

const UNIT = String.raw`(?:ms|µs|us|s|req/s|MB|MiB|KB|KiB|GB|%)`;
const NUM = String.raw`\d+(?:[.,]\d+)?`;

/** What makes a comment line a run's figure, each with its name for the failure message. */
const FIGURES: [string, RegExp][] = [
  ["a decimal with a unit", new RegExp(String.raw`\b\d+\.\d+\s?${UNIT}(?![\w/])`)],
  ["a range with a unit", new RegExp(String.raw`\b${NUM}\s?[-–]\s?${NUM}\s?${UNIT}(?![\w/])`)],
  ["a range of decimals", /\b\d+\.\d+\s?[-–]\s?\d+\.\d+\b/],
  ["a before -> after pair", new RegExp(String.raw`\b${NUM}\s?(?:${UNIT}|x)?\s?->\s?${NUM}`)],
  ["a decimal ratio", /\b\d+\.\d+x\b/],
  ["a rate", new RegExp(String.raw`\b${NUM}\s?req/s\b`)],
  ["a statistic with a number", /\b(?:median|p50|p95|p99|measured)\b\s*(?:of|at|:)?\s*\d/i],
];

/**
 * The name of the first figure pattern `line` matches, or null. Quoted text ("1.4 MB", an
 * example of a format) and code in backquotes are left out.
 */
function figureIn(line: string): string | null {
  const prose = line.replace(/"[^"]*"|`[^`]*`/g, "");
  return FIGURES.find(([, re]) => re.test(prose))?.[0] ?? null;
}

/**
 * The comments of a TypeScript source, each as its lines with their line numbers. A small lexer:
 * it skips strings, template literals (with their `${}` nesting) and regular expression literals,
 * so that a `//` inside a URL or a pattern is not taken for a comment.
 */
function comments(source: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let i = 0;
  let line = 1;
  const braces: number[] = []; // open `{` counts of each template `${` we are inside
  const push = (text: string, start: number) => {
    text.split("\n").forEach((t, k) => out.push({ line: start + k, text: t }));
  };
  const lastSignificant = () => {
    let j = i - 1;
    while (j >= 0 && /\s/.test(source[j])) j--;
    return j < 0 ? "" : source[j];
  };
  const skipQuoted = (quote: string) => {
    i++;
    while (i < source.length && source[i] !== quote) {
      if (source[i] === "\\") i++;
      else if (source[i] === "\n") line++;
      i++;
    }
    i++;
  };
  const skipTemplate = (): boolean => {
    // From after "`" or "}" of a `${}`; true when it stopped at "${".
    while (i < source.length) {
      const c = source[i];
      if (c === "\\") i += 2;
      else if (c === "`") {
        i++;
        return false;
      } else if (c === "$" && source[i + 1] === "{") {
        i += 2;
        return true;
      } else {
        if (c === "\n") line++;
        i++;
      }
    }
    return false;
  };
  while (i < source.length) {
    const c = source[i];
    const next = source[i + 1];
    if (c === "\n") {
      line++;
      i++;
    } else if (c === "/" && next === "/") {
      const end = source.indexOf("\n", i);
      const stop = end < 0 ? source.length : end;
      push(source.slice(i + 2, stop), line);
      i = stop;
    } else if (c === "/" && next === "*") {
      const end = source.indexOf("*/", i + 2);
      const stop = end < 0 ? source.length : end;
      const text = source.slice(i + 2, stop);
      push(text, line);
      line += text.split("\n").length - 1;
      i = stop + 2;
    } else if (c === "/" && /^$|[(,=:[!&|?{};+\-*%<>~^]/.test(lastSignificant())) {
      // A regular expression literal: to its closing slash, outside a character class.
      let inClass = false;
      i++;
      while (i < source.length && source[i] !== "\n") {
        if (source[i] === "\\") i++;
        else if (source[i] === "[") inClass = true;
        else if (source[i] === "]") inClass = false;
        else if (source[i] === "/" && !inClass) break;
        i++;
      }
      i++;
    } else if (c === "'" || c === '"') {
      skipQuoted(c);
    } else if (c === "`") {
      i++;
      if (skipTemplate()) braces.push(0);
    } else if (c === "{" && braces.length) {
      braces[braces.length - 1]++;
      i++;
    } else if (c === "}" && braces.length) {
      if (braces[braces.length - 1] === 0) {
        braces.pop();
        i++;
        if (skipTemplate()) braces.push(0);
      } else {
        braces[braces.length - 1]--;
        i++;
      }
    } else {
      i++;
    }
  }
  return out;
}

/** Every product .ts/.tsx file (tests excluded), relative to the repository root. */
async function productFiles(): Promise<string[]> {
  const root = new URL("../", import.meta.url);
  const files: string[] = [];
  const walk = async (dir: string) => {
    for await (const e of Deno.readDir(new URL(dir, root))) {
      const path = `${dir}${e.name}`;
      if (e.isDirectory) await walk(`${path}/`);
      else if (/\.tsx?$/.test(e.name) && !/_test\.tsx?$/.test(e.name)) files.push(path);
    }
  };
  for (const dir of PRODUCT) await walk(`${dir}/`);
  return files.sort();
}

Deno.test("figureIn() flags the figures of a run", () => {
  const runs = [
    "median of 15: 0.242-0.248 ms against 0.211-0.219",
    "the newest page 0.23 -> 0.16-0.17 ms",
    "a 5.3 MB copy into mapped memory took 0.2 ms",
    "held the loop for 20-26 ms",
    "B12 `t2,-t1` 744-773 against 989-1,020 req/s",
    "slowed the next upload by a fifth (B2: 91 -> 114 ms; B8 0.79x -> 0.74x)",
    "health p99 15 ms instead of 10",
    "(measured: 10% of a one-word search's throughput)",
    "at 400 req/s",
  ];
  assert.deepEqual(runs.filter((l) => figureIn(l) === null), []);
});

Deno.test("figureIn() passes the constants that are the invariant", () => {
  const invariants = [
    "Bodies are read 64 KiB at a time.",
    "A pause of 2 ms lets the other requests in (HOLD_MS).",
    "At most 20 MiB, refused up front on a larger Content-Length.",
    "the slowest upload a deadline allows for (16 KB/s)",
    "a 5x5 median filter turns a photo's grain into flat grey",
    "each bit set when the coefficient is above their median",
    "8-bit grey, 2-D DCT, 64-bit hashes",
    "see bench/RESULTS.md#notes-moved-from-code-comments (B3)",
    '"1.4 MB", "812 KB", "532 bytes".',
    "A pause of 50 ms plus up to 100 ms at random before the retry.",
  ];
  assert.deepEqual(invariants.filter((l) => figureIn(l) !== null), []);
});

Deno.test("comments() reads comments and skips strings, templates and patterns", () => {
  const source = [
    'const url = "http://example.org/x"; // a 1.5 ms comment',
    "const t = `${a}//not ${`//nested`} a comment`;",
    "const re = /\\/\\/[\"']/g; /* block",
    " * 2 lines */",
  ].join("\n");
  assert.deepEqual(comments(source), [
    { line: 1, text: " a 1.5 ms comment" },
    { line: 3, text: " block" },
    { line: 4, text: " * 2 lines " },
  ]);
});

Deno.test("no comment in product code carries a run's figures", async () => {
  const found: string[] = [];
  const pendingClean: string[] = [];
  for (const file of await productFiles()) {
    const source = await Deno.readTextFile(new URL(`../${file}`, import.meta.url));
    const figures = comments(source).filter(({ text }) => figureIn(text));
    if (file in PENDING) {
      if (figures.length === 0) pendingClean.push(file);
      continue;
    }
    for (const { line, text } of figures) {
      found.push(`${file}:${line}: ${figureIn(text)}: ${text.trim()}`);
    }
  }
  assert.deepEqual(pendingClean, [], "these files are clean now: take them off PENDING");
  assert.deepEqual(
    found,
    [],
    "move these figures to bench/RESULTS.md (## Notes moved from code comments) or the commit " +
      "body, and leave the invariant with a pointer to its evidence",
  );
});
