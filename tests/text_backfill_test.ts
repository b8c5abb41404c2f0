/**
 * `deno task text:backfill`: every image without caption text gets a recognition job from the
 * durable job queue, batch after batch (more images than a batch here); images with text, and
 * images whose original is gone, are left as they are, and the chain ends.
 */
import assert from "node:assert/strict";
import { JobQueue } from "../lib/jobs/mod.ts";
import { captureLogger } from "../lib/log.ts";
import { recognitionKind, TEXT_BACKFILL_BATCH, textBackfillKind } from "../lib/text/jobs.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";

// No job queue in the service: uploads queue no recognition, as before issue 21.
const svc = await startService();
const jobs = await JobQueue.start(svc.db.url, captureLogger("warn").log, { maxConnections: 2 });
Deno.test.afterAll(async () => {
  await jobs.stop(0);
  await svc.close();
});

Deno.test("deno task text:backfill recognises every image without text, through the job queue", async () => {
  const sql = svc.db.sql;
  const auth = await authHeader(svc.app);
  const uploaded: string[] = [];
  for (let i = 0; i < 3; i++) {
    const res = await upload(svc.app, auth, await makeImage("png", 10 + i, 10));
    assert.equal(res.status, 201);
    uploaded.push((await res.json()).short_id);
  }
  await sql`update images set text = 'kept', text_source = 'manual' where short_id = ${
    uploaded[2]
  }`;
  // More rows than a batch, whose originals are missing: passed over, so the chain ends.
  await sql`
    insert into images (short_id, hash, content_type, size_bytes, width, height)
    select 'gone' || lpad(n::text, 4, '0'), md5(n::text), 'image/png', 1, 1, 1
    from generate_series(1, ${TEXT_BACKFILL_BATCH + 5}) n`;

  const { log, lines } = captureLogger("info");
  const read: string[] = [];
  const reader = { read: () => (read.push("x"), Promise.resolve({ text: "BACKFILLED WORDS" })) };
  const deps = { sql: svc.services.sql, store: svc.s3.store, log };
  await jobs.work(recognitionKind({ ...deps, reader: () => Promise.resolve(reader) }));
  await jobs.work(textBackfillKind({ sql: svc.services.sql, jobs, log }));
  const task = await new Deno.Command(Deno.execPath(), {
    args: ["task", "text:backfill"],
    env: { DATABASE_URL: svc.db.url },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(task.code, 0, new TextDecoder().decode(task.stderr));
  assert.match(
    new TextDecoder().decode(task.stdout),
    new RegExp(`Queued: ${TEXT_BACKFILL_BATCH + 7} image\\(s\\)`),
  );

  const deadline = Date.now() + 60_000;
  for (;;) {
    const [{ n }] =
      await sql`select count(*)::int as n from images where text = 'BACKFILLED WORDS'`;
    if (n === 2 && lines.some((l) => l.includes("caption backfill: every image"))) break;
    assert.ok(Date.now() < deadline, `the backfill did not end within 60 s (${n} read)`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const texts = await sql<{ short_id: string; text: string | null }[]>`
    select short_id, text from images where short_id = any(${uploaded}) order by seq`;
  assert.deepEqual(texts.map((t) => t.text), ["BACKFILLED WORDS", "BACKFILLED WORDS", "kept"]);
  assert.equal(read.length, 2, "only images with an original were read");
  const res = await svc.app.request("/api/v1/images?q=backfilled");
  assert.deepEqual(
    (await res.json()).items.map((i: { short_id: string }) => i.short_id),
    uploaded.slice(0, 2).reverse(),
  );
});
