import assert from "node:assert/strict";
import sharp from "sharp";
import { createSql } from "../db/client.ts";
import { backfillThumbnails } from "../services/thumbnail_backfill.ts";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import type { Thumbnailer } from "../services/deps.ts";
import { thumbnailKey } from "../domain/storage_keys.ts";
import { readAll } from "../adapters/storage/mod.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";

Deno.test("backfillThumbnails() fills missing thumbnails, resumes an interrupted run, and is safe twice", async () => {
  // No thumbnailer: uploads are stored without thumbnails, like images from before them.
  const svc = await startService();
  const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000 });
  try {
    const auth = await authHeader(svc.app);
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) {
      const img = await (await upload(svc.app, auth, await makeImage("png", 800, 200))).json();
      assert.equal(img.thumbnail_key, null);
      ids.push(img.short_id);
    }
    const broken =
      await (await upload(svc.app, auth, (await makeImage("jpeg", 600, 600)).slice(0, 900)))
        .json();
    const thumbnailKeys = async () =>
      (await svc.db.sql<{ short_id: string; thumbnail_key: string | null }[]>`
        select short_id, thumbnail_key from images order by seq`).map((r) => r.thumbnail_key);

    // A run that loses its database while it makes the second thumbnail, as a process that is
    // killed there would: the first image is finished, the second is not.
    const doomed = createSql(svc.db.url);
    let calls = 0;
    const interrupting: Thumbnailer = {
      thumbnail: async (input, signal) => {
        if (++calls === 2) {
          await doomed.end({ timeout: 0 });
          throw new Error("interrupted");
        }
        return await pool.thumbnail(input, signal);
      },
    };
    await assert.rejects(backfillThumbnails(doomed, svc.s3.store, interrupting));
    assert.equal(calls, 2);
    assert.deepEqual(await thumbnailKeys(), [thumbnailKey(ids[0]), null, null, null, null]);
    assert.equal(await svc.s3.store.head(thumbnailKey(ids[1])), null, "nothing of the second");

    const resumed = await backfillThumbnails(svc.db.sql, svc.s3.store, pool);
    assert.deepEqual(resumed, { made: 3, failed: 1 }, "the rerun does only what was left");
    assert.deepEqual(await thumbnailKeys(), [...ids.map(thumbnailKey), null]);
    for (const id of ids) {
      const res = await svc.app.request(`/api/v1/images/${id}`);
      const img = await res.json();
      assert.equal(img.thumbnail_key, thumbnailKey(id));
      const meta = await sharp(await readAll((await svc.s3.store.get(img.thumbnail_key))!.body))
        .metadata();
      assert.deepEqual([meta.format, meta.width, meta.height], ["webp", 400, 100]);
    }
    const again = await backfillThumbnails(svc.db.sql, svc.s3.store, pool);
    assert.deepEqual(again, { made: 0, failed: 1 }, "another run only retries the broken one");
    assert.equal(
      (await (await svc.app.request(`/api/v1/images/${broken.short_id}`)).json()).thumbnail_key,
      null,
    );
  } finally {
    pool.close();
    await svc.close();
  }
});
