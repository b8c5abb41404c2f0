import assert from "node:assert/strict";
import sharp from "sharp";
import { threadNices } from "../../tests/_harness/threads.ts";
import { lowerPixelThreads, PIXEL_THREADS_NICE } from "./pixel_threads.ts";

/** Pixel work on several pipelines at once, so that libvips starts threads. */
function pixelWork() {
  return Promise.all(
    Array.from(
      { length: 4 },
      (_, i) =>
        sharp({ create: { width: 1500, height: 1500, channels: 3, background: `#${i}8${i}` } })
          .blur(2).jpeg().toBuffer(),
    ),
  );
}

Deno.test("libvips' threads run at nice 10, found as they start; no other thread is lowered", async () => {
  await pixelWork();
  const others = threadNices(Deno.pid).filter((t) => t.name !== "libvips worker");
  const lowered = lowerPixelThreads();
  try {
    const check = () => {
      const threads = threadNices(Deno.pid);
      const pixel = threads.filter((t) => t.name === "libvips worker");
      assert.ok(pixel.length > 0, "libvips started threads");
      assert.deepEqual(pixel.filter((t) => t.nice !== PIXEL_THREADS_NICE), []);
      for (const t of others) {
        const now = threads.find((n) => n.tid === t.tid);
        if (now) assert.equal(now.nice, t.nice, `${t.name} ${t.tid}`);
      }
      assert.equal(threads.find((t) => t.tid === Deno.pid)?.nice, 0, "the event loop's thread");
    };
    check();
    // Threads started later, from threads at nice 0, are found by the next scan.
    const before = new Set(threadNices(Deno.pid).map((t) => t.tid));
    await Promise.all([pixelWork(), pixelWork()]);
    lowered.scan();
    check();
    console.log(
      `libvips threads started meanwhile: ${
        threadNices(Deno.pid).filter((t) => t.name === "libvips worker" && !before.has(t.tid))
          .length
      }`,
    );
  } finally {
    lowered.stop();
  }
});
