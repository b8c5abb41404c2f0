/**
 * `deno task video:backfill`: every moving image without its MP4 or animated preview (uploaded
 * before issue 45), an animated WebP included, gets a rendition job from the durable job queue;
 * stills (a still WebP too: no job at all) and images that have both are left as they are, and
 * the chain ends.
 */
import assert from "node:assert/strict";
import { JobQueue } from "../adapters/jobs/mod.ts";
import { captureLogger } from "../adapters/log.ts";
import { videoBackfillKind, videoRenditionKind } from "../services/video_renditions.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";
import { makeVideo } from "./_harness/videos.ts";

// No job queue in the service: uploads queue no rendition, as before issue 45.
const svc = await startService();
const jobs = await JobQueue.start(svc.db.url, captureLogger("warn").log, { maxConnections: 2 });
Deno.test.afterAll(async () => {
  await jobs.stop(0);
  await svc.close();
});

Deno.test("deno task video:backfill makes the MP4 and preview of every moving image", async () => {
  const sql = svc.db.sql;
  const auth = await authHeader(svc.app);
  const ids: string[] = [];
  const files = [
    await makeVideo("gif"),
    await makeVideo("webm"),
    await makeImage("png"),
    await makeVideo("webp"),
    await makeImage("webp"),
  ];
  for (const bytes of files) {
    const res = await upload(svc.app, auth, bytes);
    assert.equal(res.status, 201);
    ids.push((await res.json()).short_id);
  }
  const { log, lines } = captureLogger("info");
  await jobs.work(videoRenditionKind({
    sql: svc.services.sql,
    store: svc.s3.store,
    log,
    video: svc.services.video!,
    timeoutMs: 60_000,
    maxSeconds: 60,
  }));
  await jobs.work(videoBackfillKind({ sql: svc.services.sql, store: svc.s3.store, jobs, log }));
  const task = await new Deno.Command(Deno.execPath(), {
    args: ["task", "video:backfill"],
    env: { DATABASE_URL: svc.db.url },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(task.code, 0, new TextDecoder().decode(task.stderr));
  assert.match(
    new TextDecoder().decode(task.stdout),
    /^Queued: 2 moving image\(s\) lack .* 2 WebP\(s\) without one are checked/,
  );

  const deadline = Date.now() + 60_000; // a hang guard
  for (;;) {
    const [{ n }] = await sql`
      select count(*)::int as n from images
      where mp4_bytes is not null and preview_bytes is not null`;
    if (n === 3 && lines.some((l) => l.includes("video backfill: every moving image"))) break;
    assert.ok(Date.now() < deadline, `the backfill did not end within 60 s (${n} made)`);
    await new Promise((r) => setTimeout(r, 100));
  }
  // The still WebP's header was read, and no job was sent for it.
  const [{ sent }] = await sql<{ sent: number }[]>`
    select count(*)::int as sent from jobs.job
    where name = 'video-rendition' and data->>'short_id' = ${ids[4]}`;
  assert.equal(sent, 0, "a still WebP is not queued");
  const rows = await sql<{ short_id: string; made: boolean }[]>`
    select short_id, mp4_bytes is not null as made from images
    where short_id = any(${ids}) order by seq`;
  assert.deepEqual(rows.map((r) => r.made), [true, true, false, true, false], "stills have none");
  const mp4 = await svc.app.request(`/api/v1/images/${ids[0]}/video.mp4`);
  assert.equal(mp4.status, 200);
  await mp4.body?.cancel();
});
