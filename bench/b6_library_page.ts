/**
 * B6: requests per second of the server-rendered library page `/` showing 50 images, against
 * the JSON of the same 50 images (`/api/v1/images?limit=50`), concurrency 8, alternating rounds;
 * then both again with LISTING_CACHE_ENTRIES=0, where every request queries (and every page
 * renders) afresh.
 */
import sharp from "sharp";
import { benchMain } from "./_lib/bench_main.ts";
import { freshBenchDatabase } from "./_lib/databases.ts";
import { load } from "./_lib/load.ts";
import { perS, x } from "./_lib/results.ts";
import { photoPixels } from "../tests/_harness/photos.ts";
import { signIn, spawnBenchService } from "./_lib/service.ts";
import { uploadNew } from "./_lib/uploads.ts";

if (import.meta.main) {
  await benchMain("B6", "library page vs the JSON of the same 50 images", async (notes) => {
    const db = await freshBenchDatabase();
    try {
      const svc = await spawnBenchService(db.url, null); // filesystem store: only reads are measured
      const auth = await signIn(svc.base);
      for (let i = 0; i < 50; i++) {
        const jpeg = new Uint8Array(
          await sharp(photoPixels(320, 240, 100 + i), {
            raw: { width: 320, height: 240, channels: 3 },
          })
            .jpeg().toBuffer(),
        );
        await uploadNew(svc.base, auth, jpeg, [`tag${i % 7}`, `group${i % 3}`, "bench"]);
      }
      /** Page and JSON requests per second on `base`, in alternating rounds. */
      const compare = async (base: string) => {
        const page = () => fetch(`${base}/`);
        const api = () => fetch(`${base}/api/v1/images?limit=50`);
        const html = await (await page()).text();
        const json = await (await api()).json();
        if (json.items.length !== 50) throw new Error(`API returned ${json.items.length} items`);
        const shown = json.items.filter((i: { short_id: string }) =>
          html.includes(i.short_id)
        ).length;
        const totals = { page: { n: 0, ms: 0, err: 0 }, api: { n: 0, ms: 0, err: 0 } };
        let p99 = { page: 0, api: 0 };
        for (let round = 0; round < 2; round++) {
          for (const side of round === 0 ? ["page", "api"] as const : ["api", "page"] as const) {
            const r = await load(
              { concurrency: 8, durationMs: 4000, maxRequests: 50_000, warmup: 3 },
              side === "page" ? page : api,
            );
            totals[side].n += r.requests;
            totals[side].ms += r.elapsedMs;
            totals[side].err += r.errors;
            p99 = { ...p99, [side]: Math.max(p99[side], r.p99) };
          }
        }
        const note = `page ${(html.length / 1024).toFixed(0)} KiB of HTML showing ${shown}/50 ` +
          `of the images; JSON ${
            (JSON.stringify(json).length / 1024).toFixed(0)
          } KiB; errors ${totals.page.err}/${totals.api.err}; worst-round p99 page ${
            p99.page.toFixed(1)
          } ms, API ${p99.api.toFixed(1)} ms`;
        return {
          pageRps: totals.page.n / (totals.page.ms / 1000),
          apiRps: totals.api.n / (totals.api.ms / 1000),
          note,
        };
      };

      const cached = await compare(svc.base);
      notes.push(cached.note);
      await svc.stop();
      // Both sides again with every request running its query (and so rendering its page).
      const uncachedSvc = await spawnBenchService(db.url, null, { LISTING_CACHE_ENTRIES: "0" });
      const uncached = await compare(uncachedSvc.base);
      notes.push(`LISTING_CACHE_ENTRIES=0: ${uncached.note}`);
      await uncachedSvc.stop();
      return [{
        metric: "GET / (50 images), concurrency 8",
        value: perS(cached.pageRps),
        baseline: `/api/v1/images?limit=50 ${perS(cached.apiRps)}`,
        ratio: x(cached.pageRps / cached.apiRps),
        target: ">= 0.5x",
        met: cached.pageRps / cached.apiRps >= 0.5,
      }, {
        metric: "the same with LISTING_CACHE_ENTRIES=0 (every request queries and renders)",
        value: perS(uncached.pageRps),
        baseline: `/api/v1/images?limit=50 ${perS(uncached.apiRps)}`,
        ratio: x(uncached.pageRps / uncached.apiRps),
        target: "- (diagnostic)",
        met: null,
      }];
    } finally {
      await db.drop();
    }
  });
}
