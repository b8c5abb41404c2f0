import assert from "node:assert/strict";
import { lazyReader, recognizeImage } from "./recognition.ts";

/** A stand-in reader that counts its closes. */
function fakeReader() {
  const reader = { closes: 0, read: () => Promise.resolve({ text: "" }), close: async () => {} };
  reader.close = () => (reader.closes++, Promise.resolve());
  return reader;
}

Deno.test("lazyReader() starts on the first get, once, and close() stops what is up", async () => {
  const made: ReturnType<typeof fakeReader>[] = [];
  const lazy = lazyReader(() => Promise.resolve(made[made.push(fakeReader()) - 1]));
  assert.equal(made.length, 0, "nothing starts before it is needed");
  const [a, b] = await Promise.all([lazy.get(), lazy.get()]);
  assert.equal(a, b);
  assert.equal(made.length, 1);
  await lazy.close();
  assert.equal(made[0].closes, 1);
  await assert.rejects(lazy.get(), /closed/);
});

Deno.test("lazyReader() close() does not wait for a start under way; the reader stops once up", async () => {
  const reader = fakeReader();
  const gate = Promise.withResolvers<typeof reader>();
  const lazy = lazyReader(() => gate.promise);
  const pending = lazy.get();
  let closedAt = 0;
  await lazy.close().then(() => closedAt = 1);
  assert.equal(closedAt, 1, "close() returned while the start was still under way");
  gate.resolve(reader);
  await pending;
  assert.equal(reader.closes, 1, "closed as soon as it was up");
});

Deno.test("lazyReader() tries a failed start again on the next get", async () => {
  let calls = 0;
  const lazy = lazyReader(() =>
    ++calls === 1 ? Promise.reject(new Error("no engine")) : Promise.resolve(fakeReader())
  );
  await assert.rejects(lazy.get(), /no engine/);
  await lazy.get();
  assert.equal(calls, 2);
});

Deno.test("lazyReader() stops after its idle time without a reading, and starts again", async () => {
  const made: ReturnType<typeof fakeReader>[] = [];
  const lazy = lazyReader(() => Promise.resolve(made[made.push(fakeReader()) - 1]), 50);
  const slow = Promise.withResolvers<{ text: string }>();
  await lazy.get();
  made[0].read = () => slow.promise;
  const reading = (await lazy.get()).read(new Uint8Array());
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(made[0].closes, 0, "never while a reading runs");
  slow.resolve({ text: "" });
  await reading;
  await new Promise((r) => setTimeout(r, 150));
  assert.equal(made[0].closes, 1, "stopped once idle");
  await (await lazy.get()).read(new Uint8Array());
  assert.equal(made.length, 2, "the next job starts a new one");
  await lazy.close();
  assert.equal(made[1].closes, 1);
});

Deno.test("recognizeImage() waits for uploads and thumbnails to go quiet before reading", async () => {
  const events: string[] = [];
  let busyUntil = performance.now() + 300;
  const deps = {
    // Only what recognizeImage() touches: the store's get, the reader, the log, the SQL write.
    store: {
      get: () => {
        events.push("read from storage");
        return Promise.resolve({ body: new Response("bytes").body! });
      },
    },
    reader: () =>
      Promise.resolve({
        read: () => (events.push("recognised"), Promise.resolve({ text: "" })),
      }),
    busy: () => {
      const busy = performance.now() < busyUntil;
      if (busy && events.at(-1) !== "waited") events.push("waited");
      return busy;
    },
    log: { debug: () => {} },
    sql: null,
  } as unknown as Parameters<typeof recognizeImage>[0];
  // The SQL write fails on the stand-in: what matters is what happened before it.
  await recognizeImage(deps, "AbCdEfGh").catch(() => {});
  assert.deepEqual(events, ["waited", "read from storage", "recognised"]);
  busyUntil = 0;
});
