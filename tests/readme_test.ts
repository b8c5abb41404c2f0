/**
 * The README is a front door under 250 lines that reaches every page of docs/; every section the
 * README once held still has its heading on one of those pages; and every relative link in the
 * README, docs/, bench/'s two documents, compose.yaml's comments and the code's comments leads to
 * a file (and heading) that exists. Read as text; GitHub's rules for heading anchors.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";
import { CONFIG_KEYS } from "../adapters/config.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const read = (path: string) => Deno.readTextFileSync(join(ROOT, path));

/** The README's own sections, in this order: what a newcomer needs on the first page. */
const README_SECTIONS = ["Quick start", "Features", "Configuration"];

/** The pages the README must link, for the before-stop hook and for a newcomer. */
const README_LINKS = [
  "docs/configuration.md",
  "docs/api.md",
  "docs/deployment.md",
  "docs/operations.md",
  "docs/reliability.md",
  "docs/architecture.md",
  "docs/testing.md",
  "bench/README.md",
];

/**
 * Every section of the README before it became a front door (issue 40), and the file that holds
 * its heading now: nothing it said was dropped in the move.
 */
const MOVED_SECTIONS: [string, string][] = [
  ["Quick start", "README.md"],
  ["Features", "README.md"],
  ["Configuration", "docs/configuration.md"],
  ["API", "docs/api.md"],
  ["Tags: aliases, implications, rename and merge", "docs/api.md"],
  ["Sharing into chats", "docs/api.md"],
  ["Signing in", "docs/api.md"],
  ["Login lock", "docs/api.md"],
  ["Behind a reverse proxy or load balancer", "docs/deployment.md"],
  ["Similar images and merging", "docs/features.md"],
  ["Captions: searching by the words on an image", "docs/features.md"],
  ["Deployment", "docs/deployment.md"],
  ["The container", "docs/deployment.md"],
  ["docker compose", "docs/deployment.md"],
  ["The edge reader", "docs/deployment.md"],
  ["Several replicas behind a load balancer", "docs/deployment.md"],
  ["A CDN in front of the bucket", "docs/deployment.md"],
  ["PostgreSQL's memory", "docs/deployment.md"],
  ["Operator tasks", "docs/operations.md"],
  ["Import and export", "docs/operations.md"],
  ["Reliability and security", "docs/reliability.md"],
  ["Limits", "docs/reliability.md"],
  ["Tasks", "docs/testing.md"],
  ["Layout", "docs/architecture.md"],
  ["Architecture", "docs/architecture.md"],
  ["Thumbnails", "docs/architecture.md"],
  ["Which PostgreSQL the tests use", "docs/testing.md"],
  ["How the tests are built", "docs/testing.md"],
  ["Benchmarks", "bench/README.md"],
  ["Notes moved from the README", "bench/RESULTS.md"],
];

/** What docs/deployment.md and docs/operations.md must cover, one section each. */
const DEPLOYMENT_TOPICS: [string, RegExp][] = [
  ["docs/deployment.md", /container/i],
  ["docs/deployment.md", /compose/i],
  ["docs/deployment.md", /edge reader/i],
  ["docs/deployment.md", /replicas/i],
  ["docs/deployment.md", /reverse proxy/i],
  ["docs/deployment.md", /CDN/i],
  ["docs/operations.md", /operator/i],
  ["docs/operations.md", /jobs/i],
  ["docs/operations.md", /import and export/i],
];

/** The sections docs/architecture.md is for (issue 40). */
const ARCHITECTURE_SECTIONS = [
  "Layers",
  "The import rules",
  "The path of an upload",
  "The path of a listing",
  "Layout",
];

/** The project's top folders: a code span starting with one of them names a path in the repo. */
const REPO_FOLDERS =
  /^(?:api|bench|components|db|islands|lib|migrations|routes|scripts|static|tests|vendor)\//;

/** The benchmarks bench/run.ts runs, B1 to B12. */
const BENCHES = 12;

interface Heading {
  level: number;
  text: string;
  anchor: string;
  /** Index of the heading's line in `lines`. */
  at: number;
}

interface Doc {
  /** Every line, with fenced code blocks blanked (their `#` lines are no headings, their text no links). */
  lines: string[];
  headings: Heading[];
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(text: string): string {
  return text.toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, "").trim().replace(/\s/g, "-");
}

function parse(md: string): Doc {
  let fence: string | null = null;
  const lines = md.split(/\r?\n/).map((line) => {
    const marker = line.match(/^\s*(```|~~~)/)?.[1];
    if (fence) {
      if (marker === fence) fence = null;
      return "";
    }
    if (marker) {
      fence = marker;
      return "";
    }
    return line;
  });
  const seen = new Map<string, number>();
  const headings: Heading[] = [];
  lines.forEach((line, at) => {
    const m = line.match(/^(#{1,6})\s+(.*?)\s*#*\s*$/);
    if (!m) return;
    const base = slug(m[2]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    headings.push({ level: m[1].length, text: m[2], anchor: n ? `${base}-${n}` : base, at });
  });
  return { lines, headings };
}

/** The lines under `heading`, up to the next heading of the same or a higher level. */
function body(doc: Doc, heading: Heading): string[] {
  const next = doc.headings.find((h) => h.at > heading.at && h.level <= heading.level);
  return doc.lines.slice(heading.at + 1, next?.at);
}

/** Targets of the Markdown links and images in `lines`, inline code left out. */
function linkTargets(lines: string[]): string[] {
  const text = lines.join("\n").replace(/`[^`\n]*`/g, "");
  return [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) =>
    m[1]
  );
}

/** Why the relative `target`, written in the file `from`, leads nowhere; null when it leads somewhere. */
function brokenLink(from: string, target: string): string | null {
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return null; // absolute: http:, mailto:, ...
  const [path, anchor] = target.split("#", 2);
  const file = path ? normalize(join(dirname(from), decodeURIComponent(path))) : from;
  try {
    Deno.statSync(join(ROOT, file));
  } catch {
    return `${from}: ${target}: no file ${file}`;
  }
  if (anchor === undefined) return null;
  if (!file.endsWith(".md")) {
    return `${from}: ${target}: an anchor into a file that has no headings`;
  }
  const anchors = parse(read(file)).headings.map((h) => h.anchor);
  return anchors.includes(anchor) ? null : `${from}: ${target}: no heading #${anchor} in ${file}`;
}

/** Every Markdown document whose links are checked: the README, docs/ and bench/'s two. */
function documents(): string[] {
  const docs = [...Deno.readDirSync(join(ROOT, "docs"))]
    .filter((e) => e.isFile && e.name.endsWith(".md")).map((e) => `docs/${e.name}`).sort();
  return ["README.md", ...docs, "bench/README.md", "bench/RESULTS.md"];
}

const readme = parse(read("README.md"));
const h2 = readme.headings.filter((h) => h.level === 2);

Deno.test("the README is a front door: under 250 lines", () => {
  const lines = read("README.md").split(/\r?\n/).length;
  assert.ok(lines < 250, `README.md has ${lines} lines`);
});

Deno.test("the README has its Quick start, features and common settings, in order, none empty", () => {
  const titles = h2.map((h) => h.text);
  const positions = README_SECTIONS.map((title) => titles.indexOf(title));
  README_SECTIONS.forEach((title, i) => assert.ok(positions[i] >= 0, `no "## ${title}"`));
  assert.deepEqual(positions, [...positions].sort((a, b) => a - b), `order: ${titles.join(", ")}`);
  for (const title of README_SECTIONS) {
    const text = body(readme, h2[titles.indexOf(title)]).join("").trim();
    assert.ok(text.length > 0, `"## ${title}" is empty`);
  }
});

Deno.test("the README's Configuration has a table of settings and links to the whole table", () => {
  const lines = body(readme, h2.find((h) => h.text === "Configuration")!);
  const rows = lines.filter((l) => /^\|\s*`[A-Z][A-Z0-9_]*`/.test(l));
  assert.ok(rows.length >= 5, `${rows.length} settings in the README's table`);
  assert.ok(
    linkTargets(lines).includes("docs/configuration.md"),
    "a link to docs/configuration.md",
  );
});

Deno.test("the README links every page of docs/ and bench/README.md", () => {
  const targets = linkTargets(readme.lines).map((t) => t.split("#")[0]);
  const pages = documents().filter((f) => f.startsWith("docs/"));
  for (const page of [...new Set([...README_LINKS, ...pages])]) {
    assert.ok(targets.includes(page), `the README links ${page}`);
  }
});

Deno.test("the README shows the board before its Quick start", () => {
  const intro = readme.lines.slice(0, readme.headings.find((h) => h.level === 2)?.at);
  assert.ok(
    intro.some((l) => /!\[[^\]]*\]\([^)]+\.(png|jpe?g|webp|gif)\)/.test(l)),
    "a screenshot",
  );
});

Deno.test("every section of the old README still has its heading, on a page the README links", () => {
  const linked = new Set(["README.md", ...linkTargets(readme.lines).map((t) => t.split("#")[0])]);
  const missing: string[] = [];
  for (const [title, file] of MOVED_SECTIONS) {
    if (!linked.has(file)) missing.push(`${file} (for "${title}") is not linked from the README`);
    const headings = parse(read(file)).headings.map((h) => h.text);
    if (!headings.includes(title)) missing.push(`no heading "${title}" in ${file}`);
  }
  assert.deepEqual(missing, []);
});

Deno.test("Deployment and Operations cover the container, compose, the edge reader, replicas, a proxy, a CDN, operator tasks, jobs, import and export", () => {
  for (const [file, topic] of DEPLOYMENT_TOPICS) {
    const sections = parse(read(file)).headings.filter((h) => h.level === 2).map((h) => h.text);
    assert.ok(sections.some((t) => topic.test(t)), `${topic} in ${file}: ${sections.join(", ")}`);
  }
});

Deno.test("docs/configuration.md's table lists every variable the service reads, in its order", () => {
  const rows = parse(read("docs/configuration.md")).lines.filter((l) => /^\|\s*`/.test(l));
  const documented = rows.flatMap((row) =>
    [...row.split("|")[1].matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1])
  );
  assert.deepEqual(documented, [...CONFIG_KEYS]);
});

Deno.test("bench/README.md says what B1-B12 measure, keeps a headline table and links the results", () => {
  const bench = parse(read("bench/README.md"));
  const tables = bench.headings.filter((h) => h.level === 2).map((h) => ({
    title: h.text,
    rows: body(bench, h).filter((l) => /^\|.*\|\s*$/.test(l)),
  }));
  const measures = tables.find((t) => /what each benchmark measures/i.test(t.title));
  const headline = tables.find((t) => /headline/i.test(t.title));
  assert.ok(measures && headline, `sections: ${tables.map((t) => t.title).join(", ")}`);
  for (const { rows } of [measures, headline]) {
    assert.ok(rows.some((l) => /^\|(\s*:?-+:?\s*\|)+\s*$/.test(l)), "a Markdown table");
    for (let n = 1; n <= BENCHES; n++) {
      assert.ok(rows.some((l) => l.startsWith(`| B${n} `)), `B${n} in ${rows[0]}`);
    }
  }
  assert.ok(
    linkTargets(bench.lines).some((t) => t.split("#")[0] === "RESULTS.md"),
    "a link to the full results",
  );
});

Deno.test("every relative link in the README, docs/ and bench/'s documents leads to a file and heading", () => {
  const files = documents();
  assert.ok(files.length >= 10, `sanity: ${files.join(", ")}`);
  const broken: string[] = [];
  for (const file of files) {
    const targets = linkTargets(parse(read(file)).lines);
    assert.ok(targets.length > 0, `sanity: ${file} has links`);
    for (const target of targets) {
      const problem = brokenLink(file, target);
      if (problem) broken.push(problem);
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("docs/architecture.md has its layers, import rules, the two paths and the layout", () => {
  const titles = parse(read("docs/architecture.md")).headings.filter((h) => h.level === 2)
    .map((h) => h.text);
  for (const title of ARCHITECTURE_SECTIONS) {
    assert.ok(titles.includes(title), `no "## ${title}" in ${titles.join(", ")}`);
  }
});

Deno.test("every repository path the README, docs/ and bench/README.md name in code exists", () => {
  const missing: string[] = [];
  let named = 0;
  for (const file of documents().filter((f) => f !== "bench/RESULTS.md")) {
    const text = parse(read(file)).lines.join("\n");
    for (const m of text.matchAll(/`([^`\s]+)`/g)) {
      if (!REPO_FOLDERS.test(m[1])) continue;
      named++;
      try {
        Deno.statSync(join(ROOT, m[1]));
      } catch {
        missing.push(`${file}: \`${m[1]}\``);
      }
    }
  }
  assert.ok(named > 20, `sanity: ${named} paths named`);
  assert.deepEqual(missing, []);
});

Deno.test("every path that compose.yaml's comments name exists, with its heading", () => {
  const comments = read("compose.yaml").split(/\r?\n/)
    .map((l) => l.match(/(?:^|\s)#\s?(.*)$/)?.[1] ?? "").join("\n");
  const paths = [
    ...comments.matchAll(
      /(?<![\w/.-])\.?[\w-]+(?:[./][\w-]+)*\.(?:md|ts|json|yaml|example)(?:#[\w-]+)?/g,
    ),
  ].map((m) => m[0]);
  assert.ok(paths.some((p) => p.startsWith("docs/deployment.md#")), "sanity: it points to docs/");
  assert.deepEqual(paths.map((p) => brokenLink("compose.yaml", p)).filter(Boolean), []);
});

/** Every .ts and .tsx file of the project's own code, tests and tools included. */
function codeFiles(dir = ""): string[] {
  const skip = new Set(["node_modules", "vendor", "_build", ".git", "data"]);
  return [...Deno.readDirSync(join(ROOT, dir || "."))].flatMap((e) => {
    const path = dir ? `${dir}/${e.name}` : e.name;
    if (e.isDirectory) return skip.has(e.name) || e.name.startsWith(".") ? [] : codeFiles(path);
    return /\.tsx?$/.test(e.name) ? [path] : [];
  });
}

Deno.test("the code's comments point at docs pages and headings that exist, never at a DESIGN.md", () => {
  const files = codeFiles();
  assert.ok(files.includes("adapters/config.ts"), "sanity: the walk finds the code");
  const broken: string[] = [];
  let pointers = 0;
  for (const file of files) {
    const text = read(file);
    for (const m of text.matchAll(/(?<![\w/.-])docs\/[\w-]+\.md(?:#[\w-]+)?/g)) {
      pointers++;
      const problem = brokenLink("", m[0]);
      if (problem) broken.push(`${file}: ${problem}`);
    }
    if (file !== "tests/readme_test.ts" && /\bDESIGN\.md\b/.test(text)) {
      broken.push(`${file}: names DESIGN.md, which is no file here`);
    }
  }
  assert.ok(pointers > 0, "sanity: some comment points at docs/");
  assert.deepEqual(broken, []);
});

/** The commands of the Quick start's code block, comments dropped. */
function quickStartCommands(): string[] {
  const md = read("README.md");
  const section = md.slice(md.indexOf("\n## Quick start\n"));
  const block = /^```sh\n([\s\S]*?)^```$/m.exec(section)?.[1] ?? "";
  return block.split("\n").map((l) => l.replace(/\s#.*$/, "").trim()).filter(Boolean);
}

Deno.test("the Quick start block is exactly two commands: start the board, run the tests", () => {
  assert.deepEqual(quickStartCommands(), ["deno task start", "deno task test"]);
});

Deno.test(".ci/run runs the Quick start's commands as written, with nothing a new user lacks", () => {
  const lines = read(".ci/run").split("\n").map((l) => l.replace(/(^|\s)#.*$/, "").trim())
    .filter(Boolean);
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  for (const command of quickStartCommands()) {
    // Alone on its line, or in an empty environment (`env -i NAME="…" …`), its output redirected
    // or sent to the background; never with arguments of its own.
    const asWritten = new RegExp(
      `^(?:env -i(?: [A-Z_]+="[^"]*")+ )?${escape(command)}(?:\\s+(?:\\d?>>?\\S+|&))*$`,
    );
    assert.ok(lines.some((l) => asWritten.test(l)), `.ci/run runs "${command}" as written`);
  }
  assert.deepEqual(lines.filter((l) => /\bdeno install\b/.test(l)), [], "no `deno install` step");
  assert.deepEqual(
    lines.filter((l) => /(^|\s)(export\s+)?(TEST_)?DATABASE_URL=/.test(l)),
    [],
    "no database URL a new user would not have",
  );
});
