/**
 * B17: reactions that move (issue 45), four parts on the service in its own process, s3rver in
 * another, fixtures made by FFmpeg here:
 *
 * - `--upload`: a 10-second 720p MP4 with sound against a 12 MP JPEG, uploaded alternately one at a
 *   time over a socket (B2's client), each with distinct bytes; p50 and p99 of each. The background
 *   work both leave (the MP4's preview and rendition, captions) runs as it would.
 * - `--health`: health's latency from B3's prober (its own process, every 10 ms) while the previews
 *   and MP4 renditions of several videos and GIFs are made, from the last upload's answer until the
 *   last rendition exists; against the same service idle.
 * - `--gif`: a ~2 MB GIF's MP4 rendition against the GIF.
 * - `--idle`: the service's whole process tree (the service and every child: OCR processes,
 *   FFmpeg) by /proc, once its engines have stopped for idleness (CAPTION_IDLE_SECONDS shortened),
 *   and how long the first caption and rendition after that take against their time limits.
 */
import { benchMain, runParts } from "./_lib/bench_main.ts";
import { freshBenchDatabase } from "./_lib/databases.ts";
import { cachedPhotoJpeg } from "./_lib/images.ts";
import { processTree } from "./_lib/machine.ts";
import { type Probes, probeWhile, serviceGap } from "./_lib/prober.ts";
import type { LoopGaps } from "../tests/_harness/loop_watch.ts";
import { ms, type Row, x } from "./_lib/results.ts";
import { type BenchService, signIn, spawnBenchService, startBenchS3 } from "./_lib/service.ts";
import { percentile } from "./_lib/stats.ts";
import { socketUpload, uploadNew } from "./_lib/uploads.ts";
import type { ChildS3 } from "../tests/_harness/s3_process.ts";
import { multipartBody } from "../tests/_harness/upload_form.ts";
import { withComment } from "../tests/_harness/photos.ts";
import { captionCorpus } from "../tests/_harness/caption_corpus.ts";
import { FFMPEG, ffmpegFile } from "../tests/_harness/videos.ts";
import { Ffmpeg } from "../adapters/video/ffmpeg.ts";
import { makeThumbnail } from "../adapters/thumbnails/make_thumbnail.ts";
import { THUMBNAIL_MAX_SIDE } from "../domain/thumbnail_size.ts";
import { sniffVideo } from "../domain/image_sniff.ts";
import { median } from "./_lib/stats.ts";

/** Uploads of each kind timed in `--upload` (after the warm-up). */
const UPLOAD_ROUNDS = 24;
const WARMUP_ROUNDS = 3;
/** The idle timeout the `--idle` part gives the OCR processes (default 60 s). */
const IDLE_SECONDS = 5;
/** The limits the first jobs after idleness are held to (their defaults). */
const READING_LIMIT_MS = 30_000; // adapters/ocr/recognizer.ts, one reading
const RENDITION_LIMIT_MS = 120_000; // VIDEO_RENDITION_TIMEOUT_SECONDS

const sleep = (t: number) => new Promise((r) => setTimeout(r, t));
const mb = (bytes: number) => `${(bytes / 1e6).toFixed(2)} MB`;
const mib = (kb: number) => `${(kb / 1024).toFixed(0)} MiB`;

/** A 10-second 1280x720 H.264 MP4 at 30 fps with AAC sound, as a phone or a site hands out. */
function mp4_720p(): Promise<Uint8Array> {
  return ffmpegFile("mp4", [
    "-f",
    "lavfi",
    "-i",
    "testsrc2=s=1280x720:r=30:d=10",
    "-f",
    "lavfi",
    "-i",
    "sine=frequency=440:duration=10",
    "-c:v",
    "libx264",
    "-preset",
    "veryfast",
    "-pix_fmt",
    "yuv420p",
    "-c:a",
    "aac",
    "-shortest",
    "-movflags",
    "+faststart",
  ]);
}

/** A GIF of a Mandelbrot zoom (`seconds` at 10 fps, 400x300, its own palette): ~0.5 MB a second. */
function zoomGif(seconds: number, startScale = 3): Promise<Uint8Array> {
  return ffmpegFile("gif", [
    "-f",
    "lavfi",
    "-i",
    `mandelbrot=s=400x300:r=10:start_scale=${startScale},trim=duration=${seconds}`,
    "-vf",
    "split[a][b];[a]palettegen[p];[b][p]paletteuse",
  ]);
}

/** A 6-second 640x360 VP9 WebM. */
function webm(): Promise<Uint8Array> {
  return ffmpegFile("webm", [
    "-f",
    "lavfi",
    "-i",
    "testsrc2=s=640x360:r=25:d=6",
    "-c:v",
    "libvpx-vp9",
    "-b:v",
    "500k",
    "-deadline",
    "realtime",
    "-cpu-used",
    "8",
  ]);
}

/**
 * The MP4 with a `free` box holding `tag` appended: a whole MP4 with other bytes (so another
 * content hash) and the same frames, without encoding it again.
 */
function withFreeBox(mp4: Uint8Array, tag: string): Uint8Array {
  const text = new TextEncoder().encode(tag);
  const out = new Uint8Array(mp4.length + 8 + text.length);
  out.set(mp4, 0);
  new DataView(out.buffer).setUint32(mp4.length, 8 + text.length);
  out.set(new TextEncoder().encode("free"), mp4.length + 4);
  out.set(text, mp4.length + 8);
  return out;
}

/** The image's JSON. */
async function image(base: string, auth: Record<string, string>, id: string) {
  const res = await fetch(`${base}/api/v1/images/${id}`, { headers: auth });
  if (res.status !== 200) throw new Error(`GET image ${id}: ${res.status} ${await res.text()}`);
  return await res.json() as {
    video_url: string | null;
    preview_url: string | null;
    text_source: string | null;
  };
}

/** Polls every `everyMs` until `done` holds for each of `ids`, at most `maxMs`; the time taken. */
async function waitFor(
  base: string,
  auth: Record<string, string>,
  ids: string[],
  done: (img: Awaited<ReturnType<typeof image>>) => boolean,
  maxMs: number,
  everyMs = 250,
): Promise<number> {
  const t0 = performance.now();
  const left = new Set(ids);
  while (left.size > 0) {
    for (const id of [...left]) if (done(await image(base, auth, id))) left.delete(id);
    if (left.size === 0) break;
    if (performance.now() - t0 > maxMs) {
      throw new Error(`${[...left].join(", ")} not done in ${maxMs} ms`);
    }
    await sleep(everyMs);
  }
  return performance.now() - t0;
}

const rendered = (img: { video_url: string | null; preview_url: string | null }) =>
  img.video_url !== null && img.preview_url !== null;
const captioned = (img: { text_source: string | null }) => img.text_source === "ocr";

/** `fn` on a service started for it on a fresh database; stopped and dropped after. */
async function onFreshService<T>(
  s3: ChildS3,
  env: Record<string, string>,
  fn: (svc: BenchService, auth: Record<string, string>, loopFile: string) => Promise<T>,
): Promise<T> {
  const db = await freshBenchDatabase();
  try {
    // Where the service writes its event loop's gaps when asked (bench/serve.ts).
    const loopFile = `${await Deno.makeTempDir({ prefix: "bench-b17-loop-" })}/gaps.json`;
    const svc = await spawnBenchService(db.url, s3, { BENCH_LOOP_FILE: loopFile, ...env });
    try {
      return await fn(svc, await signIn(svc.base), loopFile);
    } finally {
      await svc.stop();
    }
  } finally {
    await db.drop();
  }
}

/** `--upload`: the MP4 against the JPEG, alternating, on one service. */
async function uploadPart(s3: ChildS3, notes: string[]): Promise<Row[]> {
  const jpeg = await cachedPhotoJpeg(4000, 3000, 1);
  const mp4 = await mp4_720p();
  const rows = await onFreshService(s3, {}, async (svc, auth) => {
    const send = async (bytes: Uint8Array) => {
      // Encoded before the clock starts: the client's copying is not the service's time.
      const form = multipartBody(bytes, ["bench"]);
      const t0 = performance.now();
      const status = await socketUpload(svc.base, auth, form);
      if (status !== 201) throw new Error(`upload: HTTP ${status}`);
      return performance.now() - t0;
    };
    const jpegs: number[] = [];
    const mp4s: number[] = [];
    for (let i = 0; i < WARMUP_ROUNDS + UPLOAD_ROUNDS; i++) {
      const j = await send(withComment(jpeg, `b17-${i}`));
      const m = await send(withFreeBox(mp4, `b17-${i}`));
      if (i < WARMUP_ROUNDS) continue;
      jpegs.push(j);
      mp4s.push(m);
    }
    notes.push(
      `--upload: MP4 ${mb(mp4.length)} (1280x720, 30 fps, 10 s, H.264 and AAC), JPEG ` +
        `${mb(jpeg.length)} (4000x3000); ${WARMUP_ROUNDS} of each first as a warm-up, then ` +
        `${UPLOAD_ROUNDS} of each alternating, one at a time, over a socket; every MP4 queues its ` +
        `preview and rendition and every upload its caption, worked in the background meanwhile`,
      `--upload: MP4 uploads ${mp4s.map((v) => v.toFixed(0)).join(", ")} ms`,
      `--upload: JPEG uploads ${jpegs.map((v) => v.toFixed(0)).join(", ")} ms`,
    );
    const row = (q: number): Row => {
      const m = percentile(mp4s, q);
      const j = percentile(jpegs, q);
      return {
        metric: `upload a 10 s 720p MP4 with sound, p${q} of ${mp4s.length}`,
        value: ms(m),
        baseline: `12 MP JPEG p${q} ${ms(j)}`,
        ratio: x(m / j),
        target: "<= 1.5x",
        met: m / j <= 1.5,
      };
    };
    return [row(50), row(99)];
  });
  // Why: the steps the two uploads differ by, alone in this process once the service (and its
  // backlog of renditions) has stopped, alternating. The MP4's probe and poster frame run as the
  // service runs them (adapters/video, its defaults).
  const ffmpeg = await Ffmpeg.open({
    ffmpegPath: FFMPEG,
    timeoutMs: 30_000,
    memoryBytes: 1024 * 1024 * 1024,
    concurrency: 1,
  });
  const probes: number[] = [], frames: number[] = [], inspects: number[] = [];
  const fromFile: number[] = [], sharps: number[] = [];
  // The clip has its index first (faststart): the upload reads it through a pipe, into processes
  // started ahead once the previous upload's runs ended. This first one starts them.
  const streamable = sniffVideo(mp4)?.streamable ?? false;
  await (await ffmpeg.inspect(mp4, "mov", { maxSide: THUMBNAIL_MAX_SIDE, streamable })).poster;
  for (let i = 0; i < 8; i++) {
    let t0 = performance.now();
    await ffmpeg.probe(mp4, "mov");
    probes.push(performance.now() - t0);
    t0 = performance.now();
    await ffmpeg.frame(mp4, "mov", { maxSide: THUMBNAIL_MAX_SIDE });
    frames.push(performance.now() - t0);
    // As the upload runs them: both at once (adapters/video/ffmpeg.ts, inspect()).
    t0 = performance.now();
    await (await ffmpeg.inspect(mp4, "mov", { maxSide: THUMBNAIL_MAX_SIDE, streamable })).poster;
    inspects.push(performance.now() - t0);
    // The same started then, from a file (an MP4 with its index last; every upload before).
    t0 = performance.now();
    await (await ffmpeg.inspect(mp4, "mov", { maxSide: THUMBNAIL_MAX_SIDE })).poster;
    fromFile.push(performance.now() - t0);
    t0 = performance.now();
    await makeThumbnail(jpeg);
    sharps.push(performance.now() - t0);
  }
  await ffmpeg.close();
  return [...rows, {
    metric: "the MP4's probe and poster as the upload runs them, alone (medians of 8, in the " +
      "bench process)",
    value: ms(median(inspects)),
    baseline: `the JPEG's sharp thumbnail alone ${ms(median(sharps))}; both started then, from ` +
      `a file: ${ms(median(fromFile))}; one after the other: ffprobe ${ms(median(probes))} + ` +
      `frame ${ms(median(frames))}`,
    ratio: x(median(inspects) / median(sharps)),
    target: "- (diagnostic)",
    met: null,
  }];
}

/** `--health`: health while previews and renditions are made, against the service idle. */
async function healthPart(s3: ChildS3, notes: string[]): Promise<Row[]> {
  const mp4 = await mp4_720p();
  const files = [
    withFreeBox(mp4, "b17-health-1"),
    withFreeBox(mp4, "b17-health-2"),
    await zoomGif(4, 3),
    await zoomGif(4, 2),
    await webm(),
  ];
  return await onFreshService(s3, {}, async (svc, auth, loopFile) => {
    const idle = await probeWhile(svc.base, () => sleep(5000));
    const ids: string[] = [];
    for (const f of files) ids.push(await uploadNew(svc.base, auth, f));
    let took = 0;
    // From the last upload's answer to the last rendition: only the background work remains.
    let gaps!: LoopGaps;
    const busy: Probes = await probeWhile(svc.base, async () => {
      gaps = await serviceGap(svc.pid, loopFile, async () => {
        took = await waitFor(svc.base, auth, ids, rendered, 600_000, 1000);
      });
    }, 660_000);
    const what = `${files.length} moving images (2 MP4 720p 10 s, 2 GIFs, 1 WebM)`;
    notes.push(
      `--health: ${what} uploaded, then health probed every 10 ms from a process of its own ` +
        `until every preview and MP4 existed (${(took / 1000).toFixed(1)} s, the image JSON ` +
        `polled once a second): ${busy.latencies.length} probes (errors ${busy.errors}, max ` +
        `${ms(Math.max(...busy.latencies))}, the prober's own timer at most ${ms(busy.lag)} ` +
        `late); idle first: ${idle.latencies.length} probes (max ` +
        `${ms(Math.max(...idle.latencies))}); the service's event loop meanwhile (1 ms timer): ` +
        `longest gap ${ms(gaps.gap)}, ${gaps.over5} gaps over 5 ms, ${gaps.over20} over 20 ms, ` +
        `the most CPU its thread ran between two ticks ${ms(gaps.ran)}`,
    );
    const row = (q: number, target: string, met: boolean | null): Row => ({
      metric: `health p${q} while the previews and MP4s of ${what} are made`,
      value: ms(percentile(busy.latencies, q)),
      baseline: `idle ${ms(percentile(idle.latencies, q))}`,
      ratio: x(percentile(busy.latencies, q) / percentile(idle.latencies, q)),
      target,
      met,
    });
    return [
      row(50, "-", null),
      row(99, "p99 < 20 ms", percentile(busy.latencies, 99) < 20 && busy.errors === 0),
    ];
  });
}

/** `--gif`: a ~2 MB GIF's MP4 rendition against the GIF. */
async function gifPart(s3: ChildS3, notes: string[]): Promise<Row[]> {
  const gif = await zoomGif(4);
  return await onFreshService(s3, {}, async (svc, auth) => {
    const id = await uploadNew(svc.base, auth, gif);
    const took = await waitFor(svc.base, auth, [id], rendered, 300_000);
    const res = await fetch(`${svc.base}/api/v1/images/${id}/video.mp4`);
    if (res.status !== 200) throw new Error(`video.mp4: ${res.status}`);
    const mp4 = new Uint8Array(await res.arrayBuffer());
    const preview = await fetch(`${svc.base}/api/v1/images/${id}/preview`);
    const previewBytes = (await preview.arrayBuffer()).byteLength;
    notes.push(
      `--gif: a 400x300 GIF of 4 s at 10 fps (a Mandelbrot zoom, its own palette), ` +
        `${gif.length} bytes; its MP4 ${mp4.length} bytes, its animated preview ${previewBytes} ` +
        `bytes, both made ${(took / 1000).toFixed(1)} s after the upload answered`,
    );
    return [{
      metric: `MP4 rendition of a ${mb(gif.length)} GIF`,
      value: mb(mp4.length),
      baseline: `GIF ${mb(gif.length)}`,
      ratio: x(mp4.length / gif.length),
      target: "<= 0.5x",
      met: mp4.length / gif.length <= 0.5,
    }];
  });
}

/** The tree's resident memory, summed, and its processes by name. */
async function treeRss(pid: number) {
  const tree = await processTree(pid);
  const counts = new Map<string, number>();
  for (const p of tree) counts.set(p.name, (counts.get(p.name) ?? 0) + 1);
  return {
    kb: tree.reduce((n, p) => n + p.rssKb, 0),
    processes: tree.length,
    names: [...counts].map(([n, c]) => `${c} ${n}`).join(", "),
    tree,
  };
}

/** `--idle`: the process tree at rest after work, and the first jobs after that. */
async function idlePart(s3: ChildS3, notes: string[]): Promise<Row[]> {
  const captions = captionCorpus(2, 17);
  const first = (await captions.next()).value!;
  const second = (await captions.next()).value!;
  const gifs = [await zoomGif(2, 3), await zoomGif(2, 2.5)];
  return await onFreshService(
    s3,
    { CAPTION_IDLE_SECONDS: String(IDLE_SECONDS) },
    async (svc, auth) => {
      const start = await treeRss(svc.pid);
      // Work that starts every engine: a caption (the OCR processes) and a GIF (FFmpeg).
      let peak = start;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const now = await treeRss(svc.pid);
          if (now.kb > peak.kb) peak = now;
          await sleep(200);
        }
      })();
      const ids = [
        await uploadNew(svc.base, auth, first.bytes),
        await uploadNew(svc.base, auth, gifs[0]),
      ];
      await waitFor(svc.base, auth, ids, captioned, 300_000);
      await waitFor(svc.base, auth, [ids[1]], rendered, 300_000);
      sampling = false;
      await sampler;
      // The engines stop IDLE_SECONDS after their last work: wait until the service is alone.
      const t0 = performance.now();
      let rest = await treeRss(svc.pid);
      while (rest.processes > 1 && performance.now() - t0 < (IDLE_SECONDS + 60) * 1000) {
        await sleep(500);
        rest = await treeRss(svc.pid);
      }
      const alone = performance.now() - t0;
      // At rest for a few seconds more: the highest reading of them.
      for (let i = 0; i < 10; i++) {
        await sleep(300);
        const now = await treeRss(svc.pid);
        if (now.kb > rest.kb) rest = now;
      }
      // The first jobs after the engines stopped: a caption and a rendition.
      const t1 = performance.now();
      const captionId = await uploadNew(svc.base, auth, second.bytes);
      const gifId = await uploadNew(svc.base, auth, gifs[1]);
      const uploaded = performance.now() - t1;
      const [caption, rendition] = await Promise.all([
        waitFor(svc.base, auth, [captionId], captioned, 300_000, 100),
        waitFor(svc.base, auth, [gifId], rendered, 300_000, 100),
      ]);
      notes.push(
        `--idle: CAPTION_IDLE_SECONDS=${IDLE_SECONDS}; at start ${
          mib(start.kb)
        } (${start.names}); ` +
          `peak while a captioned JPEG and a GIF were worked ${mib(peak.kb)} (${peak.names}); ` +
          `alone again ${(alone / 1000).toFixed(1)} s after the last job, then ${mib(rest.kb)} ` +
          `(${rest.names}, the highest of ten readings 0.3 s apart); the first caption after ` +
          `that stored ${(caption / 1000).toFixed(1)} s and the GIF's preview and MP4 ` +
          `${(rendition / 1000).toFixed(1)} s after both uploads answered (${ms(uploaded)})`,
      );
      return [
        {
          metric: `whole process tree at rest, engines stopped (${rest.processes} processes)`,
          value: mib(rest.kb),
          baseline: `peak at work ${mib(peak.kb)} (${peak.processes} processes)`,
          ratio: x(rest.kb / peak.kb),
          target: "< 300 MB",
          met: rest.kb * 1024 < 300e6,
        },
        {
          metric: "first caption after the engines stopped: upload answered to caption stored",
          value: ms(caption),
          baseline: `reading limit ${ms(READING_LIMIT_MS)}`,
          ratio: x(caption / READING_LIMIT_MS),
          target: "within its limit",
          met: caption < READING_LIMIT_MS,
        },
        {
          metric: "first rendition after that: a 2 s GIF's preview and MP4",
          value: ms(rendition),
          baseline: `rendition limit ${ms(RENDITION_LIMIT_MS)}`,
          ratio: x(rendition / RENDITION_LIMIT_MS),
          target: "within its limit",
          met: rendition < RENDITION_LIMIT_MS,
        },
      ];
    },
  );
}

if (import.meta.main) {
  await benchMain(
    "B17",
    "reactions that move: video upload, renditions, idle footprint",
    async (notes) => {
      const s3 = await startBenchS3();
      return await runParts(notes, {
        upload: (n) => uploadPart(s3, n),
        health: (n) => healthPart(s3, n),
        gif: (n) => gifPart(s3, n),
        idle: (n) => idlePart(s3, n),
      });
    },
  );
}
