/**
 * The tag features of issue 20 in chromium, keyboard only: autocomplete in the library filter (with
 * exclusions and aliases), in the tag editor, answers to an older text dropped; the tags page
 * showing aliases and implications, and, signed in, creating and removing them and renaming.
 */
import assert from "node:assert/strict";
import type { Page } from "npm:playwright-core@1.65.1";
import { startService } from "../_harness/app.ts";
import { authHeader, makeImage, upload } from "../_harness/images.ts";
import {
  browserTest as registerBrowserTest,
  ensureBuiltAssets,
  focusedOnArrival,
  hydrated,
  launchBrowser,
  serve,
} from "../_harness/playwright.ts";

await ensureBuiltAssets();

const svc = await startService({ env: { LOGIN_TRUSTED_PROXY_IPS: "127.0.0.1" } });
const server = serve(svc.app.fetch);
const browser = await launchBrowser();
const auth = await authHeader(svc.app);
const TOKEN = auth.authorization.slice("Bearer ".length);
const json = { ...auth, "content-type": "application/json" };

Deno.test.afterAll(async () => {
  try {
    await browser.close();
  } finally {
    await server.close();
    await svc.close();
  }
});
addEventListener("unload", () => void browser.close().catch(() => {}));

async function seed(tags: string[]): Promise<string> {
  const res = await upload(svc.app, auth, await makeImage("png", 8, 8), tags);
  assert.equal(res.status, 201, await res.clone().text());
  return (await res.json()).short_id;
}
const laughing = [await seed(["laughing", "happy"]), await seed(["laughing"])];
await seed(["happy"]);
await seed(["happy", "sarcastic"]);
for (
  const [method, path, body] of [
    ["PUT", "/tag-aliases/lol", { target: "laughing" }],
    ["PUT", "/tag-implications/laughing", { implies: ["happy"] }],
  ] as const
) {
  const res = await svc.app.request(`/api/v1${path}`, {
    method,
    headers: json,
    body: JSON.stringify(body),
  });
  assert.ok(res.ok, await res.text());
}

/** A browser test on this file's service, signed in or not. */
const browserTest = (name: string, signedIn: boolean, fn: (page: Page) => Promise<void>) =>
  registerBrowserTest(name, () => browser, signedIn ? TOKEN : null, fn);

/** The names offered in the list of combobox `id`. */
const options = (page: Page, id: string) =>
  page.locator(`#${id}-options li > span:first-child`).evaluateAll((s) =>
    s.map((x) => x.textContent)
  );

browserTest(
  "the library filter suggests exclusions and aliases, by keyboard",
  false,
  async (page) => {
    await page.goto(`${server.url}/`);
    await hydrated(page);
    await page.keyboard.press("/");
    await page.keyboard.type("-sarc");
    await page.locator("#tag-filter-options li", { hasText: "-sarcastic" }).waitFor();
    const input = page.locator("#tag-filter");
    assert.equal(await input.getAttribute("aria-expanded"), "true");
    await page.keyboard.press("ArrowDown");
    assert.equal(await input.getAttribute("aria-activedescendant"), "tag-filter-options-0");
    assert.equal(
      await page.locator("#tag-filter-options-0").getAttribute("aria-selected"),
      "true",
    );
    await page.keyboard.press("Enter");
    assert.equal(await input.inputValue(), "-sarcastic, ");
    // An alias is offered as its target.
    await page.keyboard.type("lo");
    await page.locator("#tag-filter-options li", { hasText: "alias lol" }).waitFor();
    assert.deepEqual(await options(page, "tag-filter"), ["laughing"]);
    await page.keyboard.press("ArrowDown");
    await page.keyboard.press("Enter");
    assert.equal(await input.inputValue(), "-sarcastic, laughing, ");
    await page.keyboard.press("Escape");
    await page.keyboard.press("Enter"); // submits the filter
    await page.waitForURL(`${server.url}/?tags=-sarcastic,laughing`);
    await page.waitForFunction(() => document.querySelectorAll(".grid img").length === 2);
    const shown = await page.locator(".grid a").evaluateAll((as) =>
      as.map((a) => a.getAttribute("href")!.slice(3))
    );
    assert.deepEqual(shown, [...laughing].reverse());
  },
);

browserTest("an answer to an older text is dropped", false, async (page) => {
  // The answer for "h" is held back until the one for "ha" has arrived and shown.
  let releaseFirst!: () => void;
  const held = new Promise<void>((r) => releaseFirst = r);
  await page.route("**/api/v1/tags/suggest?*", async (route) => {
    const q = new URL(route.request().url()).searchParams.get("q");
    if (q === "h") await held;
    await route.continue();
  });
  await page.goto(`${server.url}/`);
  await hydrated(page);
  await page.keyboard.press("/");
  // Listened for before typing: the request can go out before type() returns (CI once waited
  // 30 s for a request that had already been made).
  const asked = page.waitForRequest((r) => r.url().includes("/tags/suggest?q=h&"));
  await page.keyboard.type("h");
  await asked;
  await page.keyboard.type("a");
  await page.locator("#tag-filter-options li", { hasText: "happy" }).waitFor();
  const response = page.waitForResponse((r) => r.url().includes("/tags/suggest?q=h&"));
  releaseFirst();
  await response;
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => setTimeout(r, 50))));
  // "h" would also offer "laughing".
  assert.deepEqual(await options(page, "tag-filter"), ["happy"], "still the answer for ha");
});

browserTest("the tag editor suggests as you type", true, async (page) => {
  // An image and a tag of its own: saving "laughing" here would change what the filter test
  // shows when it runs later (the order is shuffled).
  const chuckle = `chuckle${crypto.randomUUID().slice(0, 6)}`;
  await seed([chuckle]);
  await page.goto(`${server.url}/i/${await seed(["happy"])}`);
  await hydrated(page);
  await page.getByRole("button", { name: "Edit tags" }).focus();
  const focused = await focusedOnArrival(page, "edit-tags");
  await page.keyboard.press("Enter");
  // Typed at once, as a person does: the input has the focus from the moment it appears (it
  // took it after paint, and under load the keys went to the page).
  assert.ok(await focused(), "the tag input has the focus when it appears");
  await page.keyboard.press("End");
  await page.keyboard.type(", chuck");
  await page.locator("#edit-tags-options li", { hasText: chuckle }).waitFor();
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  assert.equal(await page.locator("#edit-tags").inputValue(), `happy, ${chuckle}, `);
  await page.keyboard.press("Escape");
  await page.keyboard.press("Enter");
  await page.getByText("Tags saved").waitFor();
});

browserTest("the tags page shows aliases and implications", false, async (page) => {
  await page.goto(`${server.url}/tags`);
  await hydrated(page);
  const item = page.locator(".tag-list li", { hasText: "laughing" });
  await item.getByText("also lol").waitFor();
  await item.getByText("implies happy").waitFor();
  assert.equal(await page.locator(".tag-rules").count(), 0, "no editor signed out");
});

browserTest(
  "signed in, the tags page creates and removes rules and renames",
  true,
  async (page) => {
    // A tag of its own to give rules and rename: "sarcastic" is other tests' (the filter's).
    const mine = `snide${crypto.randomUUID().slice(0, 6)}`;
    await seed([mine]);
    await page.goto(`${server.url}/tags`);
    await hydrated(page);
    await page.locator("#alias-name").focus();
    await page.keyboard.type("haha");
    await page.keyboard.press("Tab");
    await page.keyboard.type("laughing");
    await page.keyboard.press("Enter");
    await page.getByText('"haha" now means "laughing"').waitFor();
    await page.locator(".tag-list li", { hasText: "laughing" }).getByText("also haha, lol")
      .waitFor();

    await page.locator("#implication-tag").focus();
    await page.keyboard.type(mine);
    await page.keyboard.press("Tab");
    await page.keyboard.type("snark, mood");
    await page.keyboard.press("Enter");
    await page.getByText(`"${mine}" implies mood, snark`).waitFor();
    await page.locator(".tag-list li", { hasText: mine }).getByText("implies mood, snark")
      .waitFor();

    await page.getByRole("button", { name: "Remove alias haha" }).focus();
    await page.keyboard.press("Enter");
    await page.getByText('Alias "haha" removed').waitFor();

    await page.locator("#rename-from").focus();
    await page.keyboard.type(mine);
    await page.keyboard.press("Tab");
    await page.keyboard.type(`${mine}_ironic`);
    await page.keyboard.press("Enter");
    await page.getByText(`Renamed to "${mine}_ironic"`).waitFor();
    await page.locator(".tag-list li", { hasText: `${mine}_ironic` })
      .getByText("implies mood, snark").waitFor();
    const aliases = await (await svc.app.request("/api/v1/tag-aliases")).json();
    assert.deepEqual(aliases, [{ alias: "lol", target: "laughing" }]);
  },
);

browserTest("the upload form's tag input suggests as you type", true, async (page) => {
  await page.goto(`${server.url}/upload`);
  await hydrated(page);
  await page.locator("#upload-tags").focus();
  await page.keyboard.type("lo");
  await page.locator("#upload-tags-options li", { hasText: "alias lol" }).waitFor();
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  assert.equal(await page.locator("#upload-tags").inputValue(), "laughing, ");
});
