/** The full service's app: the whole API, the docs when enabled, and the pages. */
import { docsRoutes } from "../api/docs.ts";
import { createApiApp } from "../api/app.ts";
import { createShell } from "./app_shell.ts";
import type { Services } from "../services/deps.ts";
import { UploadState } from "../services/upload/state.ts";
import { originSettings } from "../adapters/http/origin.ts";
import { createPagesApp } from "../routes/_pages.ts";

/** Options of `createApp`. */
export interface AppOptions {
  /** Where `deno task build` wrote the client assets. */
  assetsDir?: string;
  dev?: boolean;
}

/** Assets built by `deno task build`, beside this file. */
export const DEFAULT_ASSETS_DIR = new URL("../_build", import.meta.url).pathname;

/**
 * Builds the client assets when they are missing (a fresh clone; the container builds them at
 * image build time) or when `dev` asks for a rebuild. Returns whether it built.
 */
export async function ensureAssets(dev = false): Promise<boolean> {
  const built = await Deno.stat(`${DEFAULT_ASSETS_DIR}/manifest.json`).then(
    () => true,
    () => false,
  );
  if (built && !dev) return false;
  // Loaded only here: the bundler is not needed once the assets exist.
  const { buildAssets } = await import("../adapters/islands/build.ts");
  await buildAssets({ dev });
  return true;
}

/**
 * Builds the whole app for `services`; nothing here listens or starts anything. Services built
 * without upload state (by hand, in a test) get their own: the app's uploads share it.
 */
export function createApp(given: Services, opts: AppOptions = {}) {
  const services = given.uploads ? given : { ...given, uploads: new UploadState() };
  const { api, read, direct } = createApiApp(services);
  return createShell(services, {
    api,
    direct,
    docs: services.config.API_DOCS_ENABLED
      ? (a) => docsRoutes(a, new URL("../node_modules/", import.meta.url))
      : undefined,
    pages: createPagesApp({
      read,
      assetsDir: opts.assetsDir ?? DEFAULT_ASSETS_DIR,
      dev: opts.dev,
      docsEnabled: services.config.API_DOCS_ENABLED,
      sharing: originSettings(services.config),
    }),
  });
}
