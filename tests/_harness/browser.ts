/**
 * Which Chromium the browser tests drive, or why they do not run. `CHROMIUM_PATH` when set (a
 * path that is not there is a failure: it was asked for), else the usual install paths. With
 * none found, the browser tests are skipped (ignored, with the reason and the install command),
 * except in CI (`CI` set and not false), where a missing browser is a failure.
 */

/**
 * Where the usual packages put Chromium or Chrome, in the order they are tried: the headless shell
 * first, the Chromium build without a browser's user interface that Playwright itself drives
 * headless. It renders with the same Blink for much less CPU than the whole browser's headless mode
 * (docs/testing.md, "Where the time goes").
 */
export const CHROMIUM_PATHS = [
  "/usr/bin/chromium-headless-shell",
  "/usr/bin/chromium",
  "/usr/bin/chromium-browser",
  "/usr/bin/google-chrome",
  "/usr/bin/google-chrome-stable",
  "/snap/bin/chromium",
  "/opt/google/chrome/chrome",
];

/** The one command that installs a browser the tests can drive (Debian). */
export const INSTALL_COMMAND = "apt-get install -y chromium-headless-shell";

/** Run with `path`, or skip (`skip: true`) or fail (`skip: false`) for `reason`. */
export type BrowserChoice =
  | { path: string; skip: false; reason?: undefined }
  | { path?: undefined; skip: boolean; reason: string };

/** Decides from the environment and a check for an executable file. */
export function chooseBrowser(
  env: Record<string, string | undefined>,
  isFile: (path: string) => boolean,
): BrowserChoice {
  const given = env.CHROMIUM_PATH?.trim();
  if (given) {
    if (isFile(given)) return { path: given, skip: false };
    return {
      skip: false,
      reason: `CHROMIUM_PATH is ${given}, and there is no browser there: set it to a Chromium ` +
        `or unset it to use one of the usual paths.`,
    };
  }
  const found = CHROMIUM_PATHS.find(isFile);
  if (found) return { path: found, skip: false };
  const ci = /^(?!false$|0$|no$)\S/i.test(env.CI?.trim() ?? "");
  const where = `CHROMIUM_PATH is unset and none of ${CHROMIUM_PATHS.join(", ")} exists`;
  return ci
    ? {
      skip: false,
      reason: `No browser for the browser tests in CI (${where}): ${INSTALL_COMMAND}`,
    }
    : {
      skip: true,
      reason: `Browser tests skipped: no Chromium found (${where}). Install one with: ` +
        INSTALL_COMMAND,
    };
}

/** True when `path` is a file this process may execute. */
export function isExecutableFile(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && ((info.mode ?? 0o755) & 0o111) !== 0;
  } catch {
    return false;
  }
}

/** The choice for this process. */
export function browserChoice(): BrowserChoice {
  return chooseBrowser(Deno.env.toObject(), isExecutableFile);
}
