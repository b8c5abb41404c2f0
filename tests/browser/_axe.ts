/**
 * The accessibility check of a page: axe-core (the npm package) run inside the page by
 * playwright, in light and dark colour schemes at a desktop and a phone viewport. `evaluate`
 * runs the engine's source through the DevTools protocol, so the page's CSP (script-src 'self')
 * does not block it.
 */
import axe from "axe-core";
import type { Page } from "playwright-core";

/** The viewports every page is checked at. */
export const VIEWPORTS = {
  desktop: { width: 1280, height: 900 },
  phone: { width: 390, height: 844 },
} as const;

/** The colour schemes every page is checked in. */
export const SCHEMES = ["light", "dark"] as const;

/** axe-core's violations on the page as it is now: `rule: target, target` per rule. */
export async function axeViolations(page: Page): Promise<string[]> {
  await page.evaluate(axe.source);
  const violations = await page.evaluate(async () => {
    // deno-lint-ignore no-explicit-any
    const result = await (globalThis as any).axe.run(document);
    return (result.violations as { id: string; nodes: { target: string[] }[] }[]).map((v) =>
      `${v.id}: ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`
    );
  });
  return violations;
}

/**
 * Runs the check on `url` in every scheme and viewport (each after `ready` says the page is
 * drawn); the violations, each prefixed with where it was found.
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
      for (const v of await axeViolations(page)) found.push(`${url} ${name} ${scheme}: ${v}`);
    }
  }
  return found;
}
