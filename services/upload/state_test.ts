import assert from "node:assert/strict";
import { PUT_SLOT_WAIT_MS, PUT_SLOTS, UploadState } from "./state.ts";

Deno.test("UploadState.busy() holds while an upload is ingested and for quietMs after it", () => {
  const uploads = new UploadState();
  assert.equal(uploads.busy(60_000), false, "no upload yet");
  {
    using _one = uploads.ingesting();
    using _two = uploads.ingesting();
    assert.equal(uploads.busy(0), true);
  }
  assert.equal(uploads.busy(0), false, "none left, and no quiet time asked for");
  assert.equal(uploads.busy(60_000), true, "the last one ended within the quiet time");
});

Deno.test("two UploadStates (two services in one process) share no slots, uploads or activity", async () => {
  const a = new UploadState();
  const b = new UploadState();
  const held = await Promise.all(Array.from({ length: PUT_SLOTS }, () => a.putting.take()));
  a.inflight.set("hash", Promise.resolve());
  using _ingesting = a.ingesting();
  assert.deepEqual([a.putting.held, b.putting.held], [PUT_SLOTS, 0]);
  assert.deepEqual([a.inflight.size, b.inflight.size], [1, 0]);
  assert.deepEqual([a.busy(0), b.busy(60_000)], [true, false]);
  for (const slot of held) slot[Symbol.dispose]();
  assert.equal(a.putting.held, 0);
});

Deno.test("UploadState's slots wait PUT_SLOT_WAIT_MS for a put, or the bound it is given", () => {
  assert.deepEqual([new UploadState().putting.max, new UploadState().putting.waitMs], [
    PUT_SLOTS,
    PUT_SLOT_WAIT_MS,
  ]);
  assert.equal(new UploadState(60_000).putting.waitMs, 60_000);
});
