/**
 * `deno task similar:backfill`: images without a perceptual hash get one from the durable job
 * queue, batch after batch, and unreadable ones are passed over so that the chain ends.
 */
import assert from "node:assert/strict";
import { makeThumbnail } from "../adapters/thumbnails/make_thumbnail.ts";
import { JobQueue } from "../adapters/jobs/mod.ts";
import { captureLogger } from "../adapters/log.ts";
import { BACKFILL_BATCH, similarBackfillKind } from "../services/similar/backfill.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, upload } from "./_harness/images.ts";
import { makeSources, makeVariants } from "./_harness/similar_corpus.ts";

// No thumbnailer: uploads store no hash, as before issue 22.
const svc = await startService();
const jobs = await JobQueue.start(svc.db.url, captureLogger("warn").log, { maxConnections: 2 });
Deno.test.afterAll(async () => {
  await jobs.stop(0);
  await svc.close();
});

Deno.test("deno task similar:backfill hashes every image without one, through the job queue", async () => {
  const sql = svc.db.sql;
  // More rows than a batch whose originals are missing: logged and passed, not retried forever.
  await sql`
    insert into images (short_id, hash, content_type, size_bytes, width, height)
    select 'gone' || lpad(n::text, 4, '0'), md5(n::text), 'image/png', 1, 1, 1
    from generate_series(1, ${BACKFILL_BATCH + 5}) n`;
  const auth = await authHeader(svc.app);
  const [source] = await makeSources(1, 404);
  const repost = (await makeVariants(source, undefined, ["webp"])).find((v) => v.name === "webp")!;
  const ids: string[] = [];
  for (const bytes of [source.bytes, repost.bytes]) {
    const res = await upload(svc.app, auth, bytes);
    assert.equal(res.status, 201);
    const body = await res.json();
    assert.deepEqual(body.similar, [], "no hash yet, so no near-duplicates");
    ids.push(body.short_id);
  }

  const { log, lines } = captureLogger("info");
  const thumbnails = { thumbnail: (b: Uint8Array) => makeThumbnail(b) };
  await jobs.work(
    similarBackfillKind({ sql: svc.services.sql, store: svc.s3.store, thumbnails, jobs, log }),
  );
  const task = await new Deno.Command(Deno.execPath(), {
    args: ["task", "similar:backfill"],
    env: { DATABASE_URL: svc.db.url },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(task.code, 0, new TextDecoder().decode(task.stderr));
  assert.match(new TextDecoder().decode(task.stdout), /Queued: 57 image\(s\)/);

  const deadline = Date.now() + 60_000;
  while (!lines.some((l) => l.includes("perceptual hash backfill done"))) {
    assert.ok(Date.now() < deadline, "the backfill chain did not end within 60 s");
    await new Promise((r) => setTimeout(r, 100));
  }
  const hashed = await sql`select short_id from images where phash is not null order by seq`;
  assert.deepEqual(hashed.map((r) => r.short_id), ids);
  assert.equal(
    lines.filter((l) => l.includes("no perceptual hash for this image")).length,
    BACKFILL_BATCH + 5,
  );
  const res = await svc.app.request(`/api/v1/images/${ids[0]}/similar`);
  const { items } = await res.json();
  assert.deepEqual(items.map((i: { image: { short_id: string } }) => i.image.short_id), [ids[1]]);
  const [pairs] = await sql`select count(*)::int as n from similar_pairs`;
  assert.equal(pairs.n, 1, "the backfill records the pair for the duplicates view");
});

Deno.test("deno task phash:backfill, the task's former name, still runs the similar backfill", async () => {
  // Without a database the task stops at once, naming itself: the alias reached the script.
  const task = await new Deno.Command(Deno.execPath(), {
    args: ["task", "phash:backfill"],
    env: { DATABASE_URL: "" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(task.code, 1);
  assert.match(
    new TextDecoder().decode(task.stderr),
    /deno task similar:backfill queues jobs in DATABASE_URL/,
  );
});
