/**
 * axe-core in a playwright-core page: the accessibility check every page of the board passes
 * (tests/browser/a11y_test.ts), in light and dark, on a desktop and on a phone.
 *
 * The pages send a Content-Security-Policy that admits only the service's own scripts, so axe is
 * not added as a `<script>`: its source is evaluated through the DevTools protocol (what
 * `page.evaluate()` does), which runs in the page's main world and is not subject to the page's
 * CSP. The page's own policy stays in force for everything else the test sees. axe-core is a
 * test-only package: imported by its inline `npm:` specifier, locked in tests/deno.lock.
 */
import type axe from "npm:axe-core@4.14.1";
import type { Page } from "npm:playwright-core@1.65.1";

/**
 * The rule sets checked: WCAG 2.0 and 2.1, levels A and AA, WCAG 2.2 AA (its one rule in axe is
 * target-size, which matters on a phone), and axe's best practices.
 */
export const AXE_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa", "best-practice"];

/**
 * Why axe could not measure a text's contrast that counts as a failure here: the text is drawn
 * over a picture or a gradient (`imgNode`, `bgImage`, `bgGradient`), where it is unreadable on
 * some pictures and no check can tell. Other reasons (covered by an open list, one-character
 * text, pseudo-content) are not failures: the covered text is checked with the list closed.
 */
export const UNMEASURED_OVER_PICTURE = ["imgNode", "bgImage", "bgGradient"];

/** Options of `axeCheck()`. */
export interface AxeCheckOptions {
  /** CSS selectors of parts of the page not to check (say why where you pass them). */
  exclude?: string[];
  /** Rule ids not to run (say why where you pass them). */
  disableRules?: string[];
  /** Tags of the rules to run (default AXE_TAGS). */
  tags?: string[];
  /** Accept text whose contrast axe could not measure because a picture is behind it. */
  allowTextOverPictures?: boolean;
}

/** One rule that failed, with every element that failed it. */
export interface AxeViolation {
  /** The rule's id, e.g. `color-contrast`, `label`, `heading-order`. */
  id: string;
  impact: string | null;
  help: string;
  helpUrl: string;
  nodes: {
    /** The element's CSS selector (`>>>` steps into a shadow root or frame). */
    target: string;
    /** Why it failed, one reason a line. */
    why: string;
    /** Its HTML, as axe shortens it. */
    html: string;
  }[];
}

let source: Promise<string> | null = null;

/** axe-core's own source, as its package exports it for injection into a page (`axe.source`). */
function axeSource(): Promise<string> {
  source ??= import("npm:axe-core@4.14.1").then((m) => m.default.source);
  return source;
}

/**
 * Runs axe-core on the page as it is now (call it after the page has hydrated and reached the
 * state to check) and returns the violations, `[]` when it passes.
 */
export async function axeCheck(page: Page, opts: AxeCheckOptions = {}): Promise<AxeViolation[]> {
  const loaded = await page.evaluate(() => "axe" in globalThis);
  if (!loaded) await page.evaluate(await axeSource());
  const rules = Object.fromEntries((opts.disableRules ?? []).map((id) => [id, { enabled: false }]));
  const overPicture = opts.allowTextOverPictures ? [] : UNMEASURED_OVER_PICTURE;
  return await page.evaluate(async ({ exclude, rules, tags, overPicture }) => {
    const a = (globalThis as unknown as { axe: typeof axe }).axe;
    const context = exclude.length ? { exclude: exclude.map((s) => [s]) } : document;
    const results = await a.run(context as axe.ElementContext, {
      runOnly: { type: "tag", values: tags },
      rules,
      resultTypes: ["violations", "incomplete"],
    });
    const unmeasured = results.incomplete.filter((r) => r.id === "color-contrast").flatMap((r) =>
      r.nodes.filter((n) =>
        n.any.some((c) => overPicture.includes((c.data as { messageKey?: string })?.messageKey!))
      )
    );
    const shown = (v: axe.Result, nodes: axe.NodeResult[], why: (n: axe.NodeResult) => string) => ({
      id: v.id,
      impact: v.impact ?? null,
      help: v.help,
      helpUrl: v.helpUrl,
      // Only what can cross the protocol: the DOM elements stay in the page.
      nodes: nodes.map((n) => ({
        target: n.target.map((t) => [t].flat().join(" >>> ")).join(" >>> "),
        why: why(n),
        html: n.html,
      })),
    });
    const lines = (summary = "") => summary.split("\n").slice(1).map((l) => l.trim());
    const violations = results.violations.map((v) =>
      shown(v, v.nodes, (n) => lines(n.failureSummary).filter(Boolean).join("; "))
    );
    if (unmeasured.length) {
      violations.push(shown(
        {
          id: "color-contrast-over-picture",
          impact: "serious",
          help: "Text over a picture needs a background of its own (its contrast is unknown)",
          helpUrl: "https://www.w3.org/WAI/WCAG21/Understanding/contrast-minimum.html",
        } as axe.Result,
        unmeasured,
        (n) => n.any.map((c) => c.message).join("; "),
      ));
    }
    return violations;
  }, { exclude: opts.exclude ?? [], rules, tags: opts.tags ?? AXE_TAGS, overPicture });
}

/**
 * The violations as text a person can act on: per rule its id, impact, help and link, then each
 * failing element's selector, why it failed, and its HTML (cut at 160 characters).
 */
export function formatViolations(violations: AxeViolation[]): string {
  return violations.map((v) =>
    [
      `${v.id} (${v.impact ?? "no impact"}): ${v.help}  <${v.helpUrl}>`,
      ...v.nodes.map((n) => {
        const html = n.html.length > 160 ? `${n.html.slice(0, 159)}…` : n.html;
        return `  - ${n.target}: ${n.why}\n      ${html}`;
      }),
    ].join("\n")
  ).join("\n");
}

/** `axeCheck()` then `formatViolations()`: `""` when the page passes. */
export async function axeReport(page: Page, opts: AxeCheckOptions = {}): Promise<string> {
  return formatViolations(await axeCheck(page, opts));
}

/** The viewports `axeEverywhere` checks a page at. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

/** The colour schemes `axeEverywhere` checks a page in. */
export const SCHEMES = ["light", "dark"] as const;

/**
 * `axeCheck` on `url` at every viewport and in every scheme (each after `ready` says the page is
 * drawn); the violations, each prefixed with where they were found. Empty when the page passes.
 */
export async function axeEverywhere(
  page: Page,
  url: string,
  ready: (page: Page) => Promise<unknown>,
): Promise<string[]> {
  const found: string[] = [];
  for (const [name, size] of Object.entries(VIEWPORTS)) {
    await page.setViewportSize(size);
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      await page.goto(url);
      await ready(page);
      const violations = await axeCheck(page);
      if (violations.length) {
        found.push(`${url} ${name} ${scheme}: ${formatViolations(violations)}`);
      }
    }
  }
  return found;
}
