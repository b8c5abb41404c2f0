import assert from "node:assert/strict";
import sharp from "sharp";
import { backfillThumbnails } from "../lib/images/thumbnail_backfill.ts";
import { ThumbnailPool } from "../lib/images/thumbnails/pool.ts";
import { readAll } from "../lib/storage/mod.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";

Deno.test("backfillThumbnails() fills missing thumbnails, resumably and safely twice", async () => {
  // No thumbnailer: uploads are stored without thumbnails, like images from before them.
  const svc = await startService();
  const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
  try {
    const auth = await authHeader(svc.app);
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const img = await (await upload(svc.app, auth, await makeImage("png", 800, 200))).json();
      assert.equal(img.thumbnail_key, null);
      ids.push(img.short_id);
    }
    const broken =
      await (await upload(svc.app, auth, (await makeImage("jpeg", 600, 600)).slice(0, 900)))
        .json();
    const first = await backfillThumbnails(svc.db.sql, svc.s3.store, pool);
    assert.deepEqual(first, { made: 3, failed: 1 });
    for (const id of ids) {
      const res = await svc.app.request(`/api/v1/images/${id}`);
      const img = await res.json();
      assert.equal(img.thumbnail_key, `thumbnails/${id}.webp`);
      const meta = await sharp(await readAll((await svc.s3.store.get(img.thumbnail_key))!.body))
        .metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ["webp", 400, 100]);
    }
    const second = await backfillThumbnails(svc.db.sql, svc.s3.store, pool);
    assert.deepEqual(second, { made: 0, failed: 1 }, "a second run only retries the broken one");
    assert.equal(
      (await (await svc.app.request(`/api/v1/images/${broken.short_id}`)).json()).thumbnail_key,
      null,
    );
  } finally {
    pool.close();
    await svc.close();
  }
});
