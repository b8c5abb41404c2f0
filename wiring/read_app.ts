/**
 * The edge reader's app: the public, read-only API, the direct image links and the pages, with
 * no docs, no sign-in and no write routes. It loads nothing of the write path
 * (tests/reader_test.ts).
 */
import { createReadApi } from "../api/read_api.ts";
import { originSettings } from "../adapters/http/origin.ts";
import { createPagesApp } from "../routes/_pages.ts";
import type { Services } from "../services/deps.ts";
import { createShell } from "./app_shell.ts";

/** Builds the reader's app on `services`; nothing here listens or starts anything. */
export function createReaderApp(services: Services, assetsDir: string) {
  const { api, read, direct } = createReadApi(services);
  return createShell(services, {
    api,
    direct,
    pages: createPagesApp({
      read,
      assetsDir,
      docsEnabled: false,
      sharing: originSettings(services.config),
    }),
  });
}
