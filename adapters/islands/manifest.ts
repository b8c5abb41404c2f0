/** The build manifest written by `buildAssets()` and read by the page renderer. */

/** What `_build/manifest.json` holds; every URL is absolute-path (`/_static/...`). */
export interface Manifest {
  /** URL of the boot module that hydrates the islands of a page. */
  boot: string;
  /** URL of the stylesheet. */
  css: string;
  /** Island name → URL of its module. */
  islands: Record<string, string>;
  /** Module URL → URLs it imports statically (for `modulepreload`). */
  imports: Record<string, string[]>;
  /** URL of the module that registers the service worker (client/sw_register.ts). */
  register?: string;
  /** Other files from `static/` (icons) by source name → hashed URL. */
  files: Record<string, string>;
}

/** URL prefix of the hashed build output. */
export const STATIC_PREFIX = "/_static/";

/** Reads `{assetsDir}/manifest.json`; throws a message naming the fix when it is missing. */
export function loadManifest(assetsDir: string): Manifest {
  const path = `${assetsDir}/manifest.json`;
  let text: string;
  try {
    text = Deno.readTextFileSync(path);
  } catch (cause) {
    throw new Error(`Cannot read ${path}: run \`deno task build\` first`, { cause });
  }
  return JSON.parse(text) as Manifest;
}

/** The module URLs to preload for `entries`: the entries and everything they import, once. */
export function modulesToPreload(manifest: Manifest, entries: string[]): string[] {
  const seen = new Set<string>();
  const visit = (url: string) => {
    if (seen.has(url)) return;
    seen.add(url);
    for (const dep of manifest.imports[url] ?? []) visit(dep);
  };
  entries.forEach(visit);
  return [...seen];
}
