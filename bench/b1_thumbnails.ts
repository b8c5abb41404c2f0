/**
 * B1: thumbnails of a 12-megapixel JPEG (4000x3000, gradient + noise), a 2000x2000 WebP and a
 * 10-frame 500x500 GIF through the worker pool (one worker, jobs one at a time), against sharp
 * called directly in this process (makeThumbnail) and against imagescript 1.3.1 (decode,
 * resize to fit 400, encode WebP). Pool and direct runs alternate, so noise hits both alike.
 */
import sharp from "sharp";
import { makeThumbnail } from "../adapters/thumbnails/make_thumbnail.ts";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import { benchMain } from "./_lib/bench_main.ts";
import { median } from "./_lib/stats.ts";
import { ms, type Row, x } from "./_lib/results.ts";
import { photoJpeg, photoPixels } from "../tests/_harness/photos.ts";
import { timeRuns } from "./_lib/load.ts";

const MAX_PIXELS = 50_000_000;

async function inputs() {
  const jpeg = await photoJpeg(4000, 3000, 1);
  const webp = new Uint8Array(
    await sharp(photoPixels(2000, 2000, 2), { raw: { width: 2000, height: 2000, channels: 3 } })
      .webp({ quality: 85 }).toBuffer(),
  );
  // 10 frames of 500x500 stacked vertically, written as an animated GIF.
  const frames = new Uint8Array(500 * 500 * 3 * 10);
  for (let f = 0; f < 10; f++) frames.set(photoPixels(500, 500, 10 + f), f * 500 * 500 * 3);
  const gif = new Uint8Array(
    await sharp(frames, { raw: { width: 500, height: 5000, channels: 3, pageHeight: 500 } })
      .gif({ loop: 0, delay: Array(10).fill(100) }).toBuffer(),
  );
  const pages = (await sharp(gif, { pages: -1 }).metadata()).pages;
  // A 16x16 PNG: almost no pixel work, so pool minus direct is the pool's fixed cost per job.
  const tiny = new Uint8Array(
    await sharp(photoPixels(16, 16, 5), { raw: { width: 16, height: 16, channels: 3 } }).png()
      .toBuffer(),
  );
  return { jpeg, webp, gif, pages, tiny };
}

/** imagescript timings of `files` (name -> bytes), in a separate, isolated Deno process. */
async function imagescriptTimes(files: Record<string, Uint8Array>, runs: number) {
  const dir = await Deno.makeTempDir({ prefix: "bench-imagescript-" });
  try {
    const args: string[] = [];
    for (const [i, [name, bytes]] of Object.entries(files).entries()) {
      const path = `${dir}/${i}.bin`;
      await Deno.writeFile(path, bytes);
      args.push(`${name}=${path}`);
    }
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--no-config",
        "--no-lock",
        "--node-modules-dir=none",
        "-A",
        new URL("./_imagescript.ts", import.meta.url).pathname,
        ...args,
      ],
      env: { IMAGESCRIPT_RUNS: String(runs) },
      cwd: dir,
      stdin: "null",
      stderr: "inherit",
    }).output();
    const text = new TextDecoder().decode(out.stdout).trim().split("\n").at(-1) ?? "";
    if (!out.success) throw new Error(`imagescript helper failed: ${text}`);
    return JSON.parse(text) as Record<string, number[] | string>;
  } finally {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) {
  await benchMain("B1", "thumbnails: worker pool vs sharp direct vs imagescript", async (notes) => {
    const { jpeg, webp, gif, pages, tiny } = await inputs();
    notes.push(
      `inputs: JPEG 4000x3000 ${(jpeg.length / 1e6).toFixed(2)} MB; WebP 2000x2000 ${
        (webp.length / 1e6).toFixed(2)
      } MB; GIF 500x500 x ${pages} frames ${(gif.length / 1e6).toFixed(2)} MB`,
    );
    // libvips settings are process-wide and the pool's worker sets concurrency 1 (one libvips
    // thread per job) when it starts: time direct sharp with the library defaults first.
    const defaultThreads = sharp.concurrency();
    const defaults: Record<string, number> = {};
    for (
      const [name, bytes] of [["JPEG 12 MP", jpeg], ["WebP 4 MP", webp], [
        "GIF 10x500x500",
        gif,
      ]] as const
    ) {
      await makeThumbnail(bytes, { maxPixels: MAX_PIXELS });
      defaults[name] = median(
        await timeRuns(6, 20_000, () => makeThumbnail(bytes, { maxPixels: MAX_PIXELS })),
      );
    }
    const pool = await ThumbnailPool.start({ size: 1, maxPixels: MAX_PIXELS });
    notes.push(
      `the pool and direct rows share the worker's process-wide libvips setting ` +
        `(concurrency ${sharp.concurrency()}); before the pool started (libvips default, ` +
        `concurrency ${defaultThreads}) direct sharp took ${
          Object.entries(defaults).map(([n, v]) => `${n} ${ms(v)}`).join(", ")
        } (medians of 6)`,
    );
    const rows: Row[] = [];
    const results: Record<string, number> = {};
    try {
      const cases = [
        ["JPEG 12 MP", jpeg, 10],
        ["WebP 4 MP", webp, 10],
        ["GIF 10x500x500", gif, 20],
        ["PNG 16x16 (fixed cost per job)", tiny, 40],
      ] as const;
      for (const [name, bytes, n] of cases) {
        // Warm both paths once.
        await makeThumbnail(bytes, { maxPixels: MAX_PIXELS });
        await pool.thumbnail(bytes);
        const direct: number[] = [];
        const pooled: number[] = [];
        await timeRuns(n, 30_000, async (i) => {
          const order = i % 2 === 0 ? ["d", "p"] : ["p", "d"];
          for (const which of order) {
            const t0 = performance.now();
            if (which === "d") await makeThumbnail(bytes, { maxPixels: MAX_PIXELS });
            else await pool.thumbnail(bytes);
            (which === "d" ? direct : pooled).push(performance.now() - t0);
          }
        });
        const d = median(direct);
        const p = median(pooled);
        results[name] = d;
        const diagnostic = bytes === tiny;
        rows.push({
          metric: `${name}: pool (1 worker), median of ${pooled.length}`,
          value: ms(p),
          baseline: `sharp direct ${ms(d)}`,
          ratio: `${x(p / d)} (+${ms(p - d)})`,
          target: diagnostic ? "- (diagnostic)" : "<= 1.1x direct",
          met: diagnostic ? null : p / d <= 1.1,
        });
      }
    } finally {
      pool.close();
    }

    // imagescript 1.3.1 from the npm registry, in its own process (see _imagescript.ts).
    const jpegTimes = await imagescriptTimes({ "JPEG 12 MP": jpeg }, 3);
    const otherTimes = await imagescriptTimes({ "WebP 4 MP": webp, "GIF 10x500x500": gif }, 2);
    for (const [name, got] of Object.entries({ ...jpegTimes, ...otherTimes })) {
      const isJpeg = name === "JPEG 12 MP";
      const d = results[name];
      if (typeof got === "string") {
        rows.push({
          metric: `${name}: imagescript 1.3.1`,
          value: `fails: ${got.slice(0, 80)}`,
          baseline: "-",
          ratio: "-",
          target: isJpeg ? ">= 10x faster than imagescript" : "-",
          met: isJpeg ? false : null,
        });
        continue;
      }
      const t = median(got);
      rows.push({
        metric: `${name}: imagescript 1.3.1 decode+resize+WebP, median of ${got.length}`,
        value: ms(t),
        baseline: `sharp direct ${ms(d)}`,
        ratio: `imagescript time / sharp time = ${x(t / d)}`,
        target: isJpeg ? ">= 10x faster than imagescript" : "-",
        met: isJpeg ? t / d >= 10 : null,
      });
    }
    return rows;
  });
}
