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

/** One console error or uncaught exception of a page; `url` is where the console placed it. */
export interface PageError {
  text: string;
  url: string;
}

/** Console errors, uncaught exceptions and CSP violations of a page, as they happen. */
export function collectErrors(page: Page): PageError[] {
  const errors: PageError[] = [];
  page.on("console", (msg) => {
    if (msg.type() === "error") errors.push({ text: msg.text(), url: msg.location().url });
  });
  page.on("pageerror", (err) => errors.push({ text: `${err.name}: ${err.message}`, url: "" }));
  return errors;
}

/** A server on a random loopback port. */
export interface TestServer {
  url: string;
  close(): Promise<void>;
}

type Handler = (req: Request, env: { remoteAddr: Deno.NetAddr }) => Response | Promise<Response>;

/**
 * Serves `handler` on 127.0.0.1, port 0, passing the socket address as the app's env (what
 * `getConnInfo` reads, so the login limiter sees a real peer).
 */
export function serve(handler: Handler): TestServer {
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    (req, info) => handler(req, { remoteAddr: info.remoteAddr }),
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}
