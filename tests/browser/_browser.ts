/** Browser-test helpers: Debian's chromium through playwright-core, and a loopback server. */
import { type Browser, chromium, type Page } from "playwright-core";

/** Flags for a quiet headless chromium in a container. */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

/** Launches chromium (`CHROMIUM_PATH` or `/usr/bin/chromium`). */
export function launchBrowser(): Promise<Browser> {
  const executablePath = Deno.env.get("CHROMIUM_PATH") ?? "/usr/bin/chromium";
  try {
    Deno.statSync(executablePath);
  } catch {
    throw new Error(`No browser at ${executablePath}: apt-get install -y chromium`);
  }
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS });
}

/** Console errors, uncaught exceptions and CSP violations of a page, as they happen. */
export function collectErrors(page: Page): string[] {
  const errors: string[] = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push(msg.text());
  });
  page.on("pageerror", (err) => errors.push(err.message));
  return errors;
}

/** A server on a random loopback port. */
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

/** Serves `handler` on 127.0.0.1, port 0. */
export function serve(handler: (req: Request) => Response | Promise<Response>): TestServer {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, handler);
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}
