/**
 * The islands runtime: server rendering with island markers, the client build and the static
 * handler for its output. See `render.ts`, `build.ts`, `static.ts`; `boot.ts` runs in browsers.
 */
export { escapeHtml, jsonForScript } from "../../domain/html_escape.ts";
export { loadManifest, type Manifest, modulesToPreload, STATIC_PREFIX } from "./manifest.ts";
export {
  type HeadTag,
  type IslandComponent,
  type PageOptions,
  registerIslands,
  type RenderedPage,
  renderPage,
} from "./render.ts";
export { IMMUTABLE, serveStatic } from "./static.ts";
