import assert from "node:assert/strict";
import { ProgressDeadline } from "./deadline.ts";
import { StorageError } from "./object_store.ts";

Deno.test("ProgressDeadline fails a body read that nothing else would end, once its time is up", async () => {
  // A source that never delivers and does not react to the fetch's abort: only the deadline can
  // end the wait (seen with fetch bodies on a loaded machine).
  const silent = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}) });
  const deadline = new ProgressDeadline(200);
  const reader = deadline.watchResponse(silent, "get").getReader();
  const t0 = performance.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outcome = await Promise.race([
    reader.read().then(() => "read", (e) => e),
    new Promise((r) => timer = setTimeout(() => r("still waiting after 5 s"), 5000)),
  ]);
  clearTimeout(timer);
  assert.ok(outcome instanceof StorageError, String(outcome));
  assert.match(outcome.message, /S3 get failed while reading: no progress for 0\.2 s/);
  assert.ok(performance.now() - t0 >= 190);
  assert.ok(deadline.expired);
});

Deno.test("ProgressDeadline counts only the time a read waits, and each chunk restarts it", async () => {
  let n = 0;
  const source = new ReadableStream<Uint8Array>({
    async pull(ctl) {
      await new Promise((r) => setTimeout(r, 120));
      if (++n > 5) ctl.close();
      else ctl.enqueue(new Uint8Array(10));
    },
  });
  const deadline = new ProgressDeadline(200);
  const reader = deadline.watchResponse(source, "get").getReader();
  let bytes = 0;
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    bytes += r.value.length;
    await new Promise((r) => setTimeout(r, 300)); // longer than the deadline, between reads
  }
  assert.equal(bytes, 50);
  assert.equal(deadline.expired, false);
});

Deno.test("ProgressDeadline holds no chunk once it is passed on: 200 MiB through it in bounded memory", async () => {
  let sent = 0;
  const source = new ReadableStream<Uint8Array>({
    pull(ctl) {
      if (sent++ === 200) ctl.close();
      else ctl.enqueue(new Uint8Array(1024 * 1024).fill(sent)); // touched, so it is resident
    },
  });
  const deadline = new ProgressDeadline(15_000);
  const before = Deno.memoryUsage().rss;
  let peak = before;
  let bytes = 0;
  for await (const part of deadline.watchResponse(source, "get")) {
    bytes += part.length;
    peak = Math.max(peak, Deno.memoryUsage().rss);
  }
  assert.equal(bytes, 200 * 1024 * 1024);
  const grewMb = (peak - before) / 1024 / 1024;
  assert.ok(
    grewMb < 100,
    `resident memory grew ${grewMb.toFixed(0)} MB while 200 MiB went through`,
  );
});
