/**
 * B15: Lighthouse 13 (the `lighthouse` npm package, its default mobile configuration: a
 * simulated mid-range phone on a slow 4G link) on `/`, `/tags`, `/i/{id}` and `/upload` of a board
 * with 200 images, before and after the service worker is installed: the performance,
 * accessibility, best-practices and SEO scores of each page (issue 44).
 *
 * Before: Lighthouse resets the origin's storage first (no service worker, empty caches). After:
 * one unrecorded run installs the worker (the pages register it on load), then the recorded run
 * keeps the storage (`disableStorageReset`), so the worker controls the page from its first
 * request. Chromium is Debian's (`/usr/bin/chromium`, or CHROME_PATH), headless.
 */
import lighthouse from "npm:lighthouse@13.5.0";
import sharp from "sharp";
import { benchMain } from "./_lib/bench_main.ts";
import { freshBenchDatabase } from "./_lib/databases.ts";
import { type Row } from "./_lib/results.ts";
import { signIn, spawnBenchService } from "./_lib/service.ts";
import { uploadNew } from "./_lib/uploads.ts";
import { photoPixels } from "../tests/_harness/photos.ts";

const IMAGES = 200;
const CATEGORIES = ["performance", "accessibility", "best-practices", "seo"] as const;
/** The issue's targets, in CATEGORIES' order. */
const TARGETS = [95, 100, 100, 100];

/** Headless Chromium with the DevTools protocol on a free port, and its profile folder. */
async function launchChromium(): Promise<{ port: number; close(): Promise<void> }> {
  const profile = await Deno.makeTempDir({ prefix: "b15-chromium-" });
  const child = new Deno.Command(Deno.env.get("CHROME_PATH") ?? "/usr/bin/chromium", {
    args: [
      "--headless=new",
      "--no-sandbox",
      "--disable-gpu",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--remote-debugging-port=0",
      `--user-data-dir=${profile}`,
      "about:blank",
    ],
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
  let seen = "";
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  let port = 0;
  while (!port) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`chromium did not start: ${seen.slice(-500)}`);
    seen += value;
    port = Number(/DevTools listening on ws:\/\/[^:]+:(\d+)\//.exec(seen)?.[1] ?? 0);
  }
  clearTimeout(timer);
  // Keep reading, so a chatty Chromium never blocks on a full pipe.
  (async () => {
    while (!(await reader.read()).done) { /* drain */ }
  })().catch(() => {});
  return {
    port,
    close: async () => {
      child.kill("SIGTERM");
      await child.status;
      await Deno.remove(profile, { recursive: true }).catch(() => {});
    },
  };
}

/** The four scores (0-100) of one Lighthouse run, and the audits that lost points. */
async function audit(url: string, port: number, keepStorage: boolean) {
  const result = await lighthouse(url, {
    port,
    output: "json",
    logLevel: "error",
    onlyCategories: [...CATEGORIES],
    disableStorageReset: keepStorage,
  });
  if (!result) throw new Error(`lighthouse gave no result for ${url}`);
  const { categories, audits, environment } = result.lhr;
  const scores = CATEGORIES.map((c) => Math.round((categories[c]?.score ?? 0) * 100));
  const timing = (id: string) => Math.round(audits[id]?.numericValue ?? 0);
  const lost: string[] = [];
  for (const c of CATEGORIES) {
    for (const ref of categories[c]?.auditRefs ?? []) {
      const a = audits[ref.id];
      if (ref.weight > 0 && a && a.score !== null && a.score < 1) {
        lost.push(`${c}: ${ref.id} ${Math.round(a.score * 100)}`);
      }
    }
  }
  const figures = `FCP ${timing("first-contentful-paint")} ms, LCP ${
    timing("largest-contentful-paint")
  } ms, TBT ${timing("total-blocking-time")} ms, CLS ${
    (audits["cumulative-layout-shift"]?.numericValue ?? 0).toFixed(3)
  }, benchmarkIndex ${Math.round(environment.benchmarkIndex)}`;
  return { scores, lost, figures };
}

if (import.meta.main) {
  await benchMain("B15", "Lighthouse (mobile) of the four pages, 200 images", async (notes) => {
    const db = await freshBenchDatabase();
    try {
      const svc = await spawnBenchService(db.url, null);
      const auth = await signIn(svc.base);
      let id = "";
      for (let i = 0; i < IMAGES; i++) {
        const jpeg = new Uint8Array(
          await sharp(photoPixels(480, 360, 1500 + i), {
            raw: { width: 480, height: 360, channels: 3 },
          }).jpeg().toBuffer(),
        );
        id = await uploadNew(svc.base, auth, jpeg, [`tag${i % 11}`, `mood${i % 5}`, "bench"]);
      }
      // Caption recognition of the new images runs in the background (two OCR processes):
      // measuring while it runs measures their CPU. Wait until every image has been read.
      const readBy = Date.now() + 15 * 60_000;
      for (;;) {
        const page = await (await fetch(`${svc.base}/api/v1/images?limit=200`)).json();
        const unread = page.items.filter((i: { text: string | null }) => i.text === null).length;
        if (unread === 0) break;
        if (Date.now() > readBy) {
          notes.push(`${unread} images still unread after 15 min: measured anyway`);
          break;
        }
        await new Promise((r) => setTimeout(r, 2000));
      }
      const pages = ["/", "/tags", `/i/${id}`, "/upload"];
      const load = () => Deno.loadavg()[0].toFixed(1);
      notes.push(
        `load average (1 min) on ${navigator.hardwareConcurrency} cores: ${load()} before`,
      );
      const chromium = await launchChromium();
      const rows: Row[] = [];
      try {
        for (const path of pages) {
          const url = svc.base + path;
          const before = await audit(url, chromium.port, false);
          await audit(url, chromium.port, true); // installs the worker and fills its caches
          const after = await audit(url, chromium.port, true);
          for (const [phase, run] of [["before", before], ["after", after]] as const) {
            rows.push({
              metric: `${path.replace(id, "{id}")}, ${phase} the service worker`,
              value: run.scores.join(" / "),
              baseline: "-",
              ratio: "-",
              target: "perf >= 95 / a11y 100 / best practices 100 / SEO 100",
              met: run.scores.every((s, i) => s >= TARGETS[i]),
            });
            notes.push(
              `${path.replace(id, "{id}")} ${phase}: ${run.figures}` +
                (run.lost.length ? `; below 100: ${run.lost.join(", ")}` : ""),
            );
          }
        }
      } finally {
        notes.push(`load average (1 min) after: ${load()}`);
        await chromium.close();
        await svc.stop();
      }
      notes.push(
        "scores: performance / accessibility / best practices / SEO, Lighthouse 13.5.0's " +
          "default (mobile) configuration with simulated throttling, headless Chromium",
      );
      return rows;
    } finally {
      await db.drop();
    }
  });
}
