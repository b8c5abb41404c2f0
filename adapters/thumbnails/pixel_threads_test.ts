/**
 * libvips' threads lowered to nice 10. The threads are looked at in a process of their own (this
 * file, run as a script): `deno test --parallel` runs other test files in this process, whose
 * pixel work would start libvips threads, and whose OCR threads change their nice, meanwhile.
 */
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

type Threads = ReturnType<typeof threadNices>;

/** The child: threads before, after lowering, and after more threads started and a scan. */
async function child(): Promise<{ before: Threads; lowered: Threads; later: Threads }> {
  await pixelWork();
  const before = threadNices(Deno.pid);
  const lowering = lowerPixelThreads();
  const lowered = threadNices(Deno.pid);
  // Threads started from now on come from threads at nice 0; the next scan finds them.
  await Promise.all([pixelWork(), pixelWork()]);
  // Only the threads there when the scan runs: libvips may start one more right after it (CI saw
  // one at nice 0, TEST_SHUFFLE_SEED=1136297641), which the next scan finds.
  const scanned = new Set(threadNices(Deno.pid).map((t) => t.tid));
  lowering.scan();
  const later = threadNices(Deno.pid).filter((t) => scanned.has(t.tid));
  lowering.stop();
  return { before, lowered, later };
}

if (import.meta.main) console.log(JSON.stringify(await child()));

Deno.test("libvips' threads run at nice 10, found as they start; no other thread is lowered", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--config",
      new URL("../../deno.json", import.meta.url).pathname,
      new URL(import.meta.url).pathname,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const { before, lowered, later }: Awaited<ReturnType<typeof child>> = JSON.parse(
    new TextDecoder().decode(out.stdout),
  );
  const pixel = (threads: Threads) => threads.filter((t) => t.name === "libvips worker");
  assert.ok(pixel(before).length > 0, "libvips started threads");
  assert.ok(pixel(before).every((t) => t.nice === 0), "at nice 0 before");
  const known = new Set(before.map((t) => t.tid));
  assert.ok(pixel(later).some((t) => !known.has(t.tid)), "libvips started more threads later");
  for (const threads of [lowered, later]) {
    assert.deepEqual(pixel(threads).filter((t) => t.nice !== PIXEL_THREADS_NICE), []);
    // Every other thread keeps its priority, the event loop's included.
    for (const t of threads.filter((t) => t.name !== "libvips worker")) {
      assert.equal(t.nice, 0, `${t.name} ${t.tid}`);
    }
  }
});
