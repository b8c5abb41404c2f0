/**
 * Server side of the islands runtime, after Fresh: a Preact `options.vnode` hook swaps every
 * vnode of a registered island component for a wrapper that renders the island inside
 * `<div data-island="Name" data-island-src="/_static/Name-HASH.js">` followed by its props in a
 * `<script type="application/json" data-island-props>` block. The boot module hydrates them.
 */
import { type ComponentType, createContext, Fragment, h, options, type VNode } from "preact";
import { useContext } from "preact/hooks";
import { renderToString } from "preact-render-to-string";
import { escapeHtml, jsonForScript } from "../../domain/html_escape.ts";
import { type Manifest, modulesToPreload } from "./manifest.ts";

/** Any island component; props differ per island, so the registry cannot name them. */
// deno-lint-ignore no-explicit-any
export type IslandComponent = ComponentType<any>;

const wrappers = new Map<IslandComponent, IslandComponent>();
/** True while the wrapper creates the vnode of the island itself, so the hook lets it be. */
let bypass = false;
/** The page being rendered (rendering is synchronous, so one at a time). */
let current: { manifest: Manifest; used: Set<string> } | null = null;
const InsideIsland = createContext(false);

/** Registers the islands by name (the generated `islands.gen.ts` lists them all). */
export function registerIslands(islands: Record<string, IslandComponent>): void {
  for (const [name, component] of Object.entries(islands)) {
    if (!wrappers.has(component)) wrappers.set(component, islandWrapper(name, component));
  }
}

function islandWrapper(name: string, Island: IslandComponent): IslandComponent {
  function IslandMarker(props: Record<string, unknown>) {
    const nested = useContext(InsideIsland);
    bypass = true;
    const island = h(Island, props);
    bypass = false;
    if (nested || current === null) return island;
    const src = current.manifest.islands[name];
    if (!src) throw new Error(`Island ${name} is not in the build manifest: run deno task build`);
    current.used.add(name);
    const { children: _children, ...data } = props;
    for (const [key, value] of Object.entries(data)) {
      if (typeof value === "function") {
        throw new TypeError(`Prop ${key} of island ${name} is a function: props must be JSON`);
      }
    }
    return h(
      Fragment,
      null,
      h("div", { "data-island": name, "data-island-src": src }, [
        h(InsideIsland.Provider, { value: true }, island),
      ]),
      h("script", {
        type: "application/json",
        "data-island-props": "",
        dangerouslySetInnerHTML: { __html: jsonForScript(data) },
      }),
    );
  }
  IslandMarker.displayName = `Island(${name})`;
  return IslandMarker;
}

const previousVnodeHook = options.vnode;
options.vnode = (vnode: VNode) => {
  if (!bypass && typeof vnode.type === "function") {
    const wrapper = wrappers.get(vnode.type);
    if (wrapper) vnode.type = wrapper;
  }
  previousVnodeHook?.(vnode);
};

/** One element of `<head>` with its attributes (values are escaped when rendered). */
export interface HeadTag {
  tag: "meta" | "link";
  attrs: Record<string, string>;
}

/** Options of `renderPage()`. */
export interface PageOptions {
  title: string;
  manifest: Manifest;
  status?: number;
  description?: string;
  /** More `<meta>` and `<link>` elements (link previews), after the title. */
  head?: HeadTag[];
}

/** A rendered document and the names of the islands it contains. */
export interface RenderedPage {
  html: string;
  status: number;
  islands: string[];
}

/** Renders `body` (the content of `<body>`) to a whole HTML document. */
export function renderPage(body: VNode, opts: PageOptions): RenderedPage {
  const { manifest } = opts;
  const state = { manifest, used: new Set<string>() };
  current = state;
  let bodyHtml: string;
  try {
    bodyHtml = renderToString(body);
  } finally {
    current = null;
  }
  const islands = [...state.used].sort();
  const head = [
    `<meta charset="utf-8">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<meta name="color-scheme" content="light dark">`,
    `<title>${escapeHtml(opts.title)}</title>`,
  ];
  if (opts.description) {
    head.push(`<meta name="description" content="${escapeHtml(opts.description)}">`);
  }
  for (const { tag, attrs } of opts.head ?? []) {
    const list = Object.entries(attrs).map(([k, v]) => ` ${k}="${escapeHtml(v)}"`).join("");
    head.push(`<${tag}${list}>`);
  }
  head.push(`<link rel="stylesheet" href="${escapeHtml(manifest.css)}">`);
  const icon = manifest.files["favicon.svg"];
  if (icon) head.push(`<link rel="icon" href="${escapeHtml(icon)}" type="image/svg+xml">`);
  if (islands.length > 0) {
    const entries = [manifest.boot, ...islands.map((name) => manifest.islands[name])];
    for (const url of modulesToPreload(manifest, entries).slice(1)) {
      head.push(`<link rel="modulepreload" href="${escapeHtml(url)}">`);
    }
    head.push(`<script type="module" src="${escapeHtml(manifest.boot)}"></script>`);
    // The service worker's registration: pages that ship no JavaScript (not found) need none.
    if (manifest.register) {
      head.push(`<script type="module" src="${escapeHtml(manifest.register)}"></script>`);
    }
  }
  const html = `<!DOCTYPE html><html lang="en"><head>${head.join("")}</head>` +
    `<body>${bodyHtml}</body></html>`;
  return { html, status: opts.status ?? 200, islands };
}
