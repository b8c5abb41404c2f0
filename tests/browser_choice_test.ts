/** Which Chromium the browser tests drive, or whether they are skipped or fail without one. */
import assert from "node:assert/strict";
import { chooseBrowser, CHROMIUM_PATHS, INSTALL_COMMAND } from "./_harness/browser.ts";

const only = (...paths: string[]) => (p: string) => paths.includes(p);

Deno.test("chooseBrowser() takes CHROMIUM_PATH first, then the usual paths in order", () => {
  const all = only("/opt/chromium/chrome", ...CHROMIUM_PATHS);
  assert.deepEqual(chooseBrowser({ CHROMIUM_PATH: "/opt/chromium/chrome" }, all), {
    path: "/opt/chromium/chrome",
    skip: false,
  });
  assert.deepEqual(chooseBrowser({}, all), {
    path: "/usr/bin/chromium-headless-shell",
    skip: false,
  });
  assert.deepEqual(chooseBrowser({}, only("/usr/bin/chromium", "/opt/google/chrome/chrome")), {
    path: "/usr/bin/chromium",
    skip: false,
  });
  assert.deepEqual(chooseBrowser({ CI: "true" }, only("/usr/bin/google-chrome")), {
    path: "/usr/bin/google-chrome",
    skip: false,
  });
});

Deno.test("chooseBrowser() skips without a browser, saying why and how to install one", () => {
  for (const CI of [undefined, "", "false", "0"]) {
    const choice = chooseBrowser({ CI }, () => false);
    assert.equal(choice.skip, true, `CI=${CI}`);
    assert.equal(choice.path, undefined);
    assert.match(choice.reason!, /no Chromium found/);
    assert.ok(choice.reason!.includes(INSTALL_COMMAND), choice.reason);
  }
});

Deno.test("chooseBrowser() fails in CI without a browser, and on a CHROMIUM_PATH that is not there", () => {
  for (const CI of ["true", "1", "yes"]) {
    const choice = chooseBrowser({ CI }, () => false);
    assert.deepEqual([choice.skip, choice.path], [false, undefined], `CI=${CI}`);
    assert.ok(choice.reason!.includes(INSTALL_COMMAND), choice.reason);
  }
  // Asked for by name: a failure even outside CI, and even when a usual path has one.
  const wrong = chooseBrowser({ CHROMIUM_PATH: "/nope/chrome" }, only(...CHROMIUM_PATHS));
  assert.deepEqual([wrong.skip, wrong.path], [false, undefined]);
  assert.match(wrong.reason!, /CHROMIUM_PATH is \/nope\/chrome/);
});
