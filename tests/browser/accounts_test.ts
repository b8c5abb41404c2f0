/**
 * The accounts UI in chromium against the real service (issue 42): joining with an invite, the
 * API key dialog with its ShareX uploader, the favourite star on the image page and the library,
 * "uploaded by", and axe-core on every new page in light and dark, at desktop and phone sizes.
 */
import assert from "node:assert/strict";
import type { Browser, Page } from "npm:playwright-core@1.65.1";
import { startService } from "../_harness/app.ts";
import { call, expect, invite, newMember, signIn } from "../_harness/accounts.ts";
import { makeImage, upload } from "../_harness/images.ts";
import {
  BROWSER,
  collectErrors,
  ensureBuiltAssets,
  hydrated,
  launchBrowser,
  serve,
  WAIT_MS,
} from "../_harness/playwright.ts";
import { axeEverywhere } from "./_axe.ts";

await ensureBuiltAssets();
const svc = await startService({ env: { LOGIN_TRUSTED_PROXY_IPS: "127.0.0.1" } });
const server = serve(svc.app.fetch);
const browser: Browser | null = BROWSER.skip ? null : await launchBrowser();
const admin = await signIn(svc);
const member = await newMember(svc, admin, "browser_member");
const base = server.url;

Deno.test.afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await server.close();
    await svc.close();
  }
});
addEventListener("unload", () => void browser?.close().catch(() => {}));

/** Chrome logs every non-2xx load; a test lists the statuses it expects so. */
const HTTP_ERROR = /^Failed to load resource: the server responded with a status of (\d+)/;

/**
 * A test in a fresh context (signed in with `token` the way the login page stores it); console
 * errors fail it, except loads answered with one of `expected` statuses.
 */
function test(
  name: string,
  token: string | null,
  fn: (page: Page) => Promise<void>,
  expected: number[] = [],
) {
  Deno.test(
    { name, ignore: BROWSER.skip, sanitizeOps: false, sanitizeResources: false },
    async () => {
      const context = await browser!.newContext({ viewport: { width: 1280, height: 900 } });
      try {
        if (token) {
          await context.addInitScript((t) => {
            localStorage.setItem("imageboard.token", t);
            localStorage.setItem("imageboard.token_expires_at", String(Date.now() + 3_600_000));
          }, token);
        }
        const page = await context.newPage();
        page.setDefaultTimeout(WAIT_MS);
        const errors = collectErrors(page).filter((e) =>
          !expected.includes(Number(HTTP_ERROR.exec(e.text)?.[1]))
        );
        await fn(page);
        assert.deepEqual(
          errors.filter((e) => !expected.includes(Number(HTTP_ERROR.exec(e.text)?.[1]))),
          [],
          "console errors",
        );
      } finally {
        await context.close();
      }
    },
  );
}

async function seed(token: string) {
  const res = await upload(svc.app, { authorization: `Bearer ${token}` }, await makeImage());
  assert.equal(res.status, 201);
  return (await res.json()).short_id as string;
}

test(
  "an invite link: choose a name and password, then signed in and named in the header",
  null,
  async (page) => {
    const code = await invite(svc, admin);
    await page.goto(`${base}/invite/${code}`);
    await hydrated(page);
    await page.getByLabel(/^Username/).fill("Newcomer");
    await page.getByLabel(/^Password/).fill("newcomer password");
    await page.getByRole("button", { name: "Join" }).click();
    await page.waitForURL(`${base}/`);
    await hydrated(page);
    await page.getByRole("link", { name: "Signed in as newcomer" }).waitFor();
    await page.getByRole("link", { name: "Favourites" }).waitFor();
    assert.equal(await page.getByRole("link", { name: "Admin" }).count(), 0);
    // The same code again: refused in words.
    await page.goto(`${base}/invite/${code}`);
    await hydrated(page);
    await page.getByLabel(/^Username/).fill("second_one");
    await page.getByLabel(/^Password/).fill("another password");
    await page.getByRole("button", { name: "Join" }).click();
    await page.getByRole("alert").getByText("This invite has been used already.").waitFor();
  },
);

test(
  "the key dialog shows the key once, offers a ShareX uploader that works, and revokes",
  member.token,
  async (page) => {
    await page.goto(`${base}/me`);
    await hydrated(page);
    await page.getByLabel("New key’s name").fill("ShareX");
    await page.getByLabel("Upload", { exact: true }).check();
    await page.getByRole("button", { name: "Create key" }).click();
    const dialog = page.getByRole("dialog", { name: "Key “ShareX” created" });
    await dialog.waitFor();
    const key = await dialog.getByLabel("The new API key").inputValue();
    assert.match(key, /^rb_[A-Za-z0-9_-]{43}$/);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      dialog.getByRole("button", { name: "Download ShareX uploader" }).click(),
    ]);
    assert.equal(
      download.suggestedFilename(),
      "reactions-127.0.0.1_" + new URL(base).port + ".sxcu",
    );
    const sxcu = JSON.parse(await Deno.readTextFile((await download.path())!));
    assert.equal(sxcu.RequestURL, `${base}/api/v1/images`);
    assert.equal(sxcu.RequestMethod, "POST");
    assert.equal(sxcu.Body, "MultipartFormData");
    assert.equal(sxcu.FileFormName, "file");
    assert.deepEqual(sxcu.Headers, { Authorization: `Bearer ${key}` });
    assert.equal(sxcu.URL, `${base}/api/v1/images/{json:short_id}/file`);
    // What ShareX does with it: upload as the file form field, then open the URL it copied.
    const form = new FormData();
    form.append(sxcu.FileFormName, new File([await makeImage() as BlobPart], "shot.png"));
    const sent = await fetch(sxcu.RequestURL, {
      method: "POST",
      headers: sxcu.Headers,
      body: form,
    });
    assert.equal(sent.status, 201);
    const answer = await sent.json();
    assert.equal(answer.uploaded_by, "browser_member");
    const link = sxcu.URL.replace("{json:short_id}", answer.short_id);
    const bytes = await fetch(link);
    assert.equal(bytes.status, 200);
    assert.equal(bytes.headers.get("content-type"), "image/png");
    await bytes.body?.cancel();
    // Done: the key is listed without itself; revoked, it stops.
    await dialog.getByRole("button", { name: "Done" }).click();
    await page.getByRole("cell", { name: "ShareX", exact: true }).waitFor();
    assert.equal(await page.getByText(key).count(), 0);
    await page.getByRole("button", { name: "Revoke ShareX" }).click();
    await page.getByText("No keys yet.").waitFor();
    await expect(401, call(svc, "GET", "/me", key));
  },
);

test(
  "the star: on the image page and on library cards, for signed-in people",
  member.token,
  async (page) => {
    const id = await seed(admin);
    // The member's favourites from the file's other tests (the order is shuffled), newest first.
    const favourites = async () =>
      (await expect(200, call(svc, "GET", "/me/favorites", member.token))).items
        .map((i: { short_id: string }) => i.short_id);
    const before = await favourites();
    await page.goto(`${base}/i/${id}`);
    await hydrated(page);
    await page.getByRole("link", { name: "admin" }).waitFor(); // uploaded by
    const star = page.getByRole("button", { name: "Add to favourites" });
    await star.click();
    await page.locator(".image-controls .star[aria-pressed=true]").waitFor();
    await page.getByText("1 favourite", { exact: true }).waitFor();
    assert.deepEqual(await favourites(), [id, ...before]);
    // "Uploaded by" leads to that person's uploads.
    await page.getByRole("link", { name: "admin", exact: true }).click();
    await page.waitForURL(`${base}/?uploader=admin`);
    await hydrated(page);
    const card = page.locator(".grid li").filter({ has: page.locator(`a[href="/i/${id}"]`) });
    const cardStar = card.locator(".card-star");
    await cardStar.waitFor();
    assert.equal(await cardStar.getAttribute("aria-pressed"), "true");
    await cardStar.click();
    await card.locator(".card-star[aria-pressed=false]").waitFor();
    assert.deepEqual(await favourites(), before);
    // Signed out (a context without the token), no stars.
    const anonymous = await browser!.newContext();
    try {
      const other = await anonymous.newPage();
      await other.goto(`${base}/i/${id}`);
      await hydrated(other);
      await other.getByText("0 favourites").waitFor();
      assert.equal(await other.locator(".star").count(), 0);
    } finally {
      await anonymous.close();
    }
  },
);

test(
  "the Favourites page lists what you starred, most recent first",
  member.token,
  async (page) => {
    const a = await seed(admin);
    const b = await seed(admin);
    for (const id of [a, b]) {
      await expect(
        204,
        call(svc, "PUT", `/me/favorites/${id}`, member.token),
      );
    }
    await page.goto(`${base}/favorites`);
    await hydrated(page);
    await page.locator(".grid li").nth(1).waitFor();
    const hrefs = await page.locator(".grid li > a").evaluateAll((els) =>
      els.map((e) => e.getAttribute("href"))
    );
    assert.deepEqual(hrefs.slice(0, 2), [`/i/${b}`, `/i/${a}`]);
  },
);

test(
  "the admin page: users, invites and the audit log; disabling in one click",
  admin,
  async (page) => {
    const leaver = await newMember(svc, admin, "leaver");
    await page.goto(`${base}/admin`);
    await hydrated(page);
    const users = page.getByRole("region", { name: "Users table" });
    await users.getByRole("cell", { name: "leaver", exact: true }).waitFor();
    await page.getByRole("button", { name: "Disable leaver" }).click();
    await page.getByRole("status").getByText("leaver disabled: signed out, keys stopped").waitFor();
    await expect(401, call(svc, "GET", "/me", leaver.token));
    await page.getByRole("button", { name: "Create invite" }).click();
    await page.locator(".invites li").first().waitFor();
    await page.reload();
    await hydrated(page);
    await page.getByRole("cell", { name: "user.update" }).first().waitFor();
    await page.getByRole("cell", { name: "invite.create" }).first().waitFor();
  },
);

for (
  const [path, token, ready] of [
    [
      "/me",
      () => member.token,
      (p: Page) => p.getByRole("heading", { name: "API keys" }).waitFor(),
    ],
    ["/admin", () => admin, (p: Page) => p.getByRole("heading", { name: "Audit log" }).waitFor()],
    [
      "/favorites",
      () => member.token,
      (p: Page) => p.locator(".grid li, .empty").first().waitFor(),
    ],
    [
      "/invite/some-code",
      () => null,
      (p: Page) => p.getByRole("button", { name: "Join" }).waitFor(),
    ],
  ] as const
) {
  test(
    `${path} passes axe-core in light and dark, at desktop and phone sizes`,
    null,
    async (page) => {
      const t = token();
      if (t) {
        await page.goto(`${base}/login`);
        await page.evaluate((t) => {
          localStorage.setItem("imageboard.token", t);
          localStorage.setItem("imageboard.token_expires_at", String(Date.now() + 3_600_000));
        }, t);
      }
      const violations = await axeEverywhere(page, `${base}${path}`, async (p) => {
        await hydrated(p);
        await ready(p);
      });
      assert.deepEqual(violations, []);
    },
  );
}
