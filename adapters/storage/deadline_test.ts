import assert from "node:assert/strict";
import { ProgressDeadline } from "./deadline.ts";
import { StorageError } from "./object_store.ts";

const CHILD = new URL("../../tests/_harness/deadline_memory_child.ts", import.meta.url).pathname;

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
  // In a child of its own, measured after forced collections: the resident size of the test
  // process also counts the other files `deno test --parallel` runs in it, and garbage a busy
  // machine's collector has not reached yet (it once read 101 MB under load this way).
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--no-check",
      "--allow-read",
      "--allow-env=CHUNKS",
      "--v8-flags=--expose-gc",
      CHILD,
    ],
    env: { CHUNKS: "200" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const { bytes, retainedMb } = JSON.parse(text);
  assert.equal(bytes, 200 * 1024 * 1024);
  // A chunk or two in flight is a few MiB; holding every chunk passed on is 200.
  assert.ok(retainedMb < 16, `${retainedMb.toFixed(1)} MiB retained while 200 MiB went through`);
});
