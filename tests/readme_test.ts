/**
 * The README keeps the sections the people who run and use the board look for, and every relative
 * link in it, in bench/RESULTS.md and in compose.yaml's comments leads to a file (and heading)
 * that exists. Read as text; GitHub's rules for heading anchors.
 */
import assert from "node:assert/strict";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const read = (path: string) => Deno.readTextFileSync(join(ROOT, path));

/** The top-level sections, in the order a reader needs them. */
const REQUIRED_SECTIONS = [
  "Quick start",
  "Features",
  "Configuration",
  "API",
  "Deployment",
  "Reliability and security",
  "Development",
];

/** What "Deployment" must cover, one subsection each. */
const DEPLOYMENT_TOPICS = [
  /container/i,
  /compose/i,
  /edge reader/i,
  /replicas/i,
  /CDN/i,
  /operator/i,
];

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

const readme = parse(read("README.md"));
const h2 = readme.headings.filter((h) => h.level === 2);

Deno.test("the README has its sections, in the order a reader needs them, none empty", () => {
  const titles = h2.map((h) => h.text);
  const positions = REQUIRED_SECTIONS.map((title) => titles.indexOf(title));
  REQUIRED_SECTIONS.forEach((title, i) => assert.ok(positions[i] >= 0, `no "## ${title}"`));
  assert.deepEqual(positions, [...positions].sort((a, b) => a - b), `order: ${titles.join(", ")}`);
  for (const title of REQUIRED_SECTIONS) {
    const text = body(readme, h2[titles.indexOf(title)]).join("").trim();
    assert.ok(text.length > 0, `"## ${title}" is empty`);
  }
});

Deno.test("the README shows the board before its Quick start", () => {
  const intro = readme.lines.slice(0, readme.headings.find((h) => h.level === 2)?.at);
  assert.ok(
    intro.some((l) => /!\[[^\]]*\]\([^)]+\.(png|jpe?g|webp|gif)\)/.test(l)),
    "a screenshot",
  );
});

Deno.test("Deployment covers the container, compose, the edge reader, replicas, a CDN and operator tasks", () => {
  const deployment = h2.find((h) => h.text === "Deployment")!;
  const end = h2.find((h) => h.at > deployment.at)?.at ?? Infinity;
  const subsections = readme.headings.filter((h) =>
    h.level === 3 && h.at > deployment.at && h.at < end
  )
    .map((h) => h.text);
  for (const topic of DEPLOYMENT_TOPICS) {
    assert.ok(subsections.some((t) => topic.test(t)), `${topic} in ${subsections.join(", ")}`);
  }
});

Deno.test("the README keeps a table of headline benchmark figures and links to bench/RESULTS.md", () => {
  const heading = readme.headings.find((h) => /^benchmarks$/i.test(h.text));
  assert.ok(heading, "a Benchmarks heading");
  const lines = body(readme, heading);
  const table = lines.filter((l) => /^\|.*\|\s*$/.test(l));
  assert.ok(table.some((l) => /^\|(\s*:?-+:?\s*\|)+\s*$/.test(l)), "a Markdown table");
  for (let n = 1; n <= 8; n++) {
    assert.ok(table.some((l) => l.startsWith(`| B${n} `)), `B${n} in the headline table`);
  }
  assert.ok(
    linkTargets(lines).some((t) => t.split("#")[0] === "bench/RESULTS.md"),
    "a link to the full results",
  );
});

Deno.test("every relative link in README.md and bench/RESULTS.md leads to a file and heading", () => {
  const broken: string[] = [];
  for (const file of ["README.md", "bench/RESULTS.md"]) {
    const targets = linkTargets(parse(read(file)).lines);
    assert.ok(targets.length > 0, `sanity: ${file} has links`);
    for (const target of targets) {
      const problem = brokenLink(file, target);
      if (problem) broken.push(problem);
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("every path that compose.yaml's comments name exists, with its README heading", () => {
  const comments = read("compose.yaml").split(/\r?\n/)
    .map((l) => l.match(/(?:^|\s)#\s?(.*)$/)?.[1] ?? "").join("\n");
  const paths = [
    ...comments.matchAll(
      /(?<![\w/.-])\.?[\w-]+(?:[./][\w-]+)*\.(?:md|ts|json|yaml|example)(?:#[\w-]+)?/g,
    ),
  ].map((m) => m[0]);
  assert.ok(paths.some((p) => p.startsWith("README.md#")), "sanity: it points to the README");
  assert.deepEqual(paths.map((p) => brokenLink("compose.yaml", p)).filter(Boolean), []);
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
