/**
 * `deno task caption:backfill`: every image without caption text gets a recognition job from the
 * durable job queue, batch after batch (more images than a batch here); images with text, and
 * images whose original is gone, are left as they are, and the chain ends.
 */
import assert from "node:assert/strict";
import { JobQueue } from "../adapters/jobs/mod.ts";
import { captureLogger } from "../adapters/log.ts";
import {
  CAPTION_BACKFILL_BATCH,
  captionBackfillKind,
  recognitionKind,
} from "../services/captions/recognition.ts";
import { CAPTION_RECOGNITION_QUEUE } from "../services/queues.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";

// No job queue in the service: uploads queue no recognition, as before issue 21.
const svc = await startService();
const jobs = await JobQueue.start(svc.db.url, captureLogger("warn").log, { maxConnections: 2 });
Deno.test.afterAll(async () => {
  await jobs.stop(0);
  await svc.close();
});

Deno.test("deno task caption:backfill recognises every image without text, through the job queue", async () => {
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
    from generate_series(1, ${CAPTION_BACKFILL_BATCH + 5}) n`;

  const { log, lines } = captureLogger("info");
  const read: string[] = [];
  const reader = { read: () => (read.push("x"), Promise.resolve({ text: "BACKFILLED WORDS" })) };
  const deps = { sql: svc.services.sql, store: svc.s3.store, log };
  await jobs.work(recognitionKind({ ...deps, reader: () => Promise.resolve(reader) }));
  await jobs.work(captionBackfillKind({ sql: svc.services.sql, jobs, log }));
  const task = await new Deno.Command(Deno.execPath(), {
    args: ["task", "caption:backfill"],
    env: { DATABASE_URL: svc.db.url },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(task.code, 0, new TextDecoder().decode(task.stderr));
  assert.match(
    new TextDecoder().decode(task.stdout),
    new RegExp(`Queued: ${CAPTION_BACKFILL_BATCH + 7} image\\(s\\)`),
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

Deno.test("recognition reads as many images at once as it has OCR processes (CAPTION_WORKERS)", async () => {
  const own = await startService();
  const queue = await JobQueue.start(own.db.url, captureLogger("warn").log, { maxConnections: 2 });
  try {
    const auth = await authHeader(own.app);
    const ids: string[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await upload(own.app, auth, await makeImage("png", 20 + i, 10));
      ids.push((await res.json()).short_id);
    }
    // Each reading waits (up to 10 s) for the other to start: one at a time, none would overlap.
    let reading = 0, most = 0;
    const bothIn = Promise.withResolvers<void>();
    const reader = {
      read: async () => {
        most = Math.max(most, ++reading);
        if (reading === 2) bothIn.resolve();
        let timer: ReturnType<typeof setTimeout> | undefined;
        await Promise.race([bothIn.promise, new Promise((r) => timer = setTimeout(r, 10_000))]);
        clearTimeout(timer);
        reading--;
        return { text: "SIDE BY SIDE" };
      },
    };
    await queue.work(recognitionKind({
      sql: own.services.sql,
      store: own.s3.store,
      log: captureLogger("warn").log,
      reader: () => Promise.resolve(reader),
      concurrency: 2,
    }));
    for (const id of ids) {
      await queue.send(CAPTION_RECOGNITION_QUEUE, { short_id: id }, { key: id });
    }
    const deadline = Date.now() + 30_000;
    for (;;) {
      const [{ n }] = await own.db.sql`
        select count(*)::int as n from images where text = 'SIDE BY SIDE'`;
      if (n === 2) break;
      assert.ok(Date.now() < deadline, `${n} of 2 read within 30 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(most, 2, "both images were being read at once");
  } finally {
    await queue.stop(0);
    await own.close();
  }
});

Deno.test("deno task text:backfill, the task's former name, still runs the caption backfill", async () => {
  // Without a database the task stops at once, naming itself: the alias reached the script.
  const task = await new Deno.Command(Deno.execPath(), {
    args: ["task", "text:backfill"],
    env: { DATABASE_URL: "" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(task.code, 1);
  assert.match(
    new TextDecoder().decode(task.stderr),
    /deno task caption:backfill queues jobs in DATABASE_URL/,
  );
});
