/**
 * Short videos as reactions (issue 45): MP4 and WebM uploads, probed by FFmpeg, with a poster, a
 * caption read from it and a perceptual hash; the refusals; and a board without FFmpeg.
 */
import assert from "node:assert/strict";
import { makeThumbnail } from "../adapters/thumbnails/make_thumbnail.ts";
import type { ImageDto } from "../domain/types.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";
import { previewKey, videoRenditionKey } from "../domain/storage_keys.ts";
import { makeSources } from "./_harness/similar_corpus.ts";
import {
  garbledMp4,
  lyingMp4,
  makeVideo,
  playlistAsMp4,
  rotatedMp4,
  stillAsGif,
  toMp4,
  truncate,
  type VideoFixture,
} from "./_harness/videos.ts";

/** What the caption reader was given: a PNG frame for a video, never the video. */
const read: Uint8Array[] = [];
const svc = await startService({
  jobs: true,
  thumbnails: {
    thumbnail: (b) => makeThumbnail(b),
    jpeg: (b, maxSide) => makeThumbnail(b, { maxSide, format: "jpeg" }),
  },
  captionReader: {
    read: (bytes) => {
      read.push(bytes);
      // A GIF as uploaded has no words; every frame FFmpeg takes has some.
      const gif = new TextDecoder().decode(bytes.subarray(0, 4)) === "GIF8";
      return Promise.resolve({ text: gif ? "" : "VIDEO WORDS" });
    },
  },
  env: { MAX_VIDEO_SECONDS: "3" },
});
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);

const PNG = [0x89, 0x50, 0x4e, 0x47];

async function post(bytes: Uint8Array): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await upload(svc.app, auth, bytes, ["moving"], { type: "video/mp4" });
  return { status: res.status, body: await res.json() };
}

async function waitForText(id: string): Promise<ImageDto> {
  for (let i = 0; i < 300; i++) {
    const image: ImageDto = await (await svc.app.request(`/api/v1/images/${id}`)).json();
    if (image.text !== null) return image;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no text for ${id} after 30 s`);
}

const accepted: [VideoFixture, string, number][] = [
  ["mp4", "video/mp4", 2],
  ["mp4_sound", "video/mp4", 2],
  ["mp4_faststart", "video/mp4", 2],
  ["hevc", "video/mp4", 2],
  ["webm", "video/webm", 2],
  ["webm_sound", "video/webm", 2.008],
];

for (const [kind, type, seconds] of accepted) {
  Deno.test(`an ${kind} upload is a video with its length, a WebP poster and a caption`, async () => {
    const bytes = await makeVideo(kind);
    const { status, body } = await post(bytes);
    assert.equal(status, 201, JSON.stringify(body));
    assert.equal(body.content_type, type);
    assert.equal(body.width, 160);
    assert.equal(body.height, 120);
    assert.equal(body.duration_seconds, seconds);
    assert.equal(body.size_bytes, bytes.length);
    const id = body.short_id as string;

    const file = await svc.app.request(`/api/v1/images/${id}/file`);
    assert.equal(file.headers.get("content-type"), type);
    assert.deepEqual(new Uint8Array(await file.arrayBuffer()), bytes, "the original, sound kept");

    const thumb = await svc.app.request(`/api/v1/images/${id}/thumbnail`);
    assert.equal(thumb.headers.get("content-type"), "image/webp");
    const poster = new Uint8Array(await thumb.arrayBuffer());
    assert.equal(new TextDecoder().decode(poster.subarray(8, 12)), "WEBP");

    const direct = await svc.app.request(`/${id}.${type === "video/mp4" ? "mp4" : "webm"}`);
    assert.equal(direct.status, 200);
    await direct.body?.cancel();

    const image = await waitForText(id);
    assert.equal(image.text, "VIDEO WORDS");
    assert.ok(
      read.some((b) => PNG.every((v, i) => b[i] === v) && b.length < bytes.length * 10),
      "the reader was given a PNG frame",
    );
    assert.ok(!read.some((b) => b.length === bytes.length && b[4] === bytes[4]), "never the video");
  });
}

Deno.test("a video's poster is its representative frame, not its black first frame", async () => {
  const color = { r: 200, g: 30, b: 30 };
  const { body } = await post(await makeVideo("mp4", 2, color));
  const thumb = await svc.app.request(`/api/v1/images/${body.short_id}/thumbnail`);
  const { default: sharp } = await import("sharp");
  const stats = await sharp(new Uint8Array(await thumb.arrayBuffer())).stats();
  assert.ok(stats.channels[0].mean > 100, `red, not black: ${stats.channels[0].mean}`);
});

Deno.test("a GIF and its MP4 copy are near-duplicates; stills have no duration", async () => {
  const [photo] = await makeSources(1, 4501);
  const gif = await stillAsGif(photo.bytes);
  const first = await post(gif);
  assert.equal(first.status, 201, JSON.stringify(first.body));
  assert.equal(first.body.content_type, "image/gif");
  assert.equal(first.body.duration_seconds, null);
  const copy = await post(await toMp4(gif));
  assert.equal(copy.status, 201, JSON.stringify(copy.body));
  assert.equal(copy.body.content_type, "video/mp4");
  const similar = copy.body.similar as { short_id: string }[];
  assert.deepEqual(similar.map((s) => s.short_id), [first.body.short_id]);
});

/** Runs FFmpeg's `tool` on `bytes` (in a file) with `args` before and after the input. */
async function onFile(tool: "ffmpeg" | "ffprobe", bytes: Uint8Array, args: string[]) {
  const dir = await Deno.makeTempDir({ prefix: "video-test-" });
  try {
    await Deno.writeFile(`${dir}/in`, bytes);
    const out = await new Deno.Command(`/usr/bin/${tool}`, {
      args: ["-v", "error", "-i", `${dir}/in`, ...args],
      stdout: "piped",
      stderr: "piped",
    }).output();
    if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
    return out.stdout;
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** What ffprobe says of `bytes` for `entries` (its -show_entries), as JSON. */
async function probeJson(bytes: Uint8Array, entries: string) {
  const out = await onFile("ffprobe", bytes, ["-show_entries", entries, "-of", "json"]);
  return JSON.parse(new TextDecoder().decode(out));
}

/** FFmpeg's output options for one frame as a PNG on standard output. */
const ONE_PNG = ["-frames:v", "1", "-f", "image2pipe", "-c:v", "png", "pipe:1"];

/** The frame of `mp4` at `at` seconds, as a PNG. */
const frameAt = (mp4: Uint8Array, at: number) =>
  onFile("ffmpeg", mp4, ["-ss", String(at), ...ONE_PNG]);

/** An animated WebP made by sharp: 120x90 frames of `colors`, each shown for its delay. */
async function animatedWebp(colors: [number, number, number][], delays: number[]) {
  const { default: sharp } = await import("sharp");
  const [w, h] = [120, 90];
  const raw = new Uint8Array(w * h * 4 * colors.length);
  colors.forEach(([r, g, b], i) => {
    for (let p = 0; p < w * h; p++) raw.set([r, g, b, 255], (i * w * h + p) * 4);
  });
  const webp = await sharp(raw, {
    raw: { width: w, height: h * colors.length, channels: 4, pageHeight: h },
  }).webp({ loop: 0, delay: delays }).toBuffer();
  return new Uint8Array(webp);
}

Deno.test("an animated WebP gets an MP4 and a preview from its frames; its poster is frame 0", async () => {
  const { default: sharp } = await import("sharp");
  // Red for 0.5 s, green for 1 s, blue for 1.5 s: each frame's own delay.
  const delays = [500, 1000, 1500];
  const webp = await animatedWebp([[220, 20, 20], [20, 220, 20], [20, 20, 220]], delays);
  const { status, body } = await post(webp);
  assert.equal(status, 201, JSON.stringify(body));
  assert.equal(body.content_type, "image/webp");
  assert.equal(body.duration_seconds, null);
  const id = body.short_id as string;
  // The poster is frame 0 (SPEC's rule for an animated image), red.
  const thumb = await svc.app.request(`/api/v1/images/${id}/thumbnail`);
  const stats = await sharp(new Uint8Array(await thumb.arrayBuffer())).stats();
  assert.ok(stats.channels[0].mean > 150 && stats.channels[1].mean < 80, "red, frame 0");

  const image = await waitForMp4(id);
  assert.equal(image.preview_url, `/api/v1/images/${id}/preview`);
  const mp4 = await renditionOf(id);
  const probe = await probeJson(mp4, "format=duration:stream=codec_name,width,height,pix_fmt");
  assert.deepEqual(
    [probe.streams[0].codec_name, probe.streams[0].pix_fmt],
    ["h264", "yuv420p"],
  );
  assert.deepEqual([probe.streams[0].width, probe.streams[0].height], [120, 90]);
  assert.ok(Math.abs(Number(probe.format.duration) - 3) < 0.1, probe.format.duration);
  // Each colour where its delay puts it: red at 0.25 s, green at 1 s, blue at 2.5 s.
  for (const [at, channel] of [[0.25, 0], [1, 1], [2.5, 2]]) {
    const png = await frameAt(mp4, at);
    const { channels } = await sharp(png).stats();
    const brightest = channels.slice(0, 3).map((c) => c.mean);
    assert.equal(brightest.indexOf(Math.max(...brightest)), channel, `at ${at} s: ${brightest}`);
  }
  // The direct link `/{short_id}.mp4` serves it, as a GIF's (og:video, Telegram).
  const direct = await svc.app.request(`/${id}.mp4`);
  assert.equal(direct.status, 200);
  assert.equal(direct.headers.get("content-type"), "video/mp4");
  assert.equal((await direct.arrayBuffer()).byteLength, mp4.length);
  const preview = new Uint8Array(
    await (await svc.app.request(`/api/v1/images/${id}/preview`)).arrayBuffer(),
  );
  const meta = await sharp(preview, { animated: true }).metadata();
  assert.deepEqual([meta.width, meta.pageHeight], [120, 90]);
  assert.equal(meta.delay!.reduce((a, b) => a + b, 0), 3000, "the whole 3 s");
  // One that FFmpeg's own encoder wrote (libwebp_anim) is decoded as well.
  const ffmpegs = await post(await makeVideo("webp"));
  assert.equal(ffmpegs.status, 201);
  await waitForMp4(ffmpegs.body.short_id as string);
});

for (const format of ["webp", "gif"] as const) {
  Deno.test(`a transparent animated ${format}'s MP4 lasts as long as the ${format}, white where it is transparent; its preview keeps alpha`, async () => {
    const { default: sharp } = await import("sharp");
    // Two frames of 120x90: the left half transparent (black under it), the right half opaque blue,
    // then green.
    const [w, h] = [120, 90];
    // Each channel's mean over a half (8 px short of the edge between them), alpha included.
    const stats = async (image: Uint8Array, left: number) => {
      const part = await sharp(image).ensureAlpha()
        .extract({ left, top: 0, width: w / 2 - 8, height: h }).png().toBuffer();
      return (await sharp(part).stats()).channels.map((c) => Math.round(c.mean));
    };
    const raw = new Uint8Array(w * h * 4 * 2);
    for (let i = 0; i < 2; i++) {
      for (let p = 0; p < w * h; p++) {
        const opaque = p % w >= w / 2;
        raw.set(
          opaque ? (i ? [20, 200, 20, 255] : [20, 20, 200, 255]) : [0, 0, 0, 0],
          (i * w * h + p) * 4,
        );
      }
    }
    // A WebP's frames come through sharp, a GIF's through FFmpeg's decoder (adapters/video).
    const frames = sharp(raw, { raw: { width: w, height: h * 2, channels: 4, pageHeight: h } });
    const moving = new Uint8Array(
      await (format === "webp" ? frames.webp({ loop: 0, delay: [500, 500] }) : frames.gif({
        loop: 0,
        delay: [500, 500],
      })).toBuffer(),
    );
    const { status, body } = await post(moving);
    assert.equal(status, 201, JSON.stringify(body));
    const id = body.short_id as string;
    const mp4 = await renditionOf(id);
    // Each frame for its whole delay, the last one too (a loop would otherwise flash it).
    const { format: { duration } } = await probeJson(mp4, "format=duration");
    assert.ok(Math.abs(Number(duration) - 1) < 0.06, `1 s long: ${duration}`);
    for (const [at, channel] of [[0.25, 2], [0.9, 1]]) {
      const png = await frameAt(mp4, at);
      const half = async (left: number) => (await stats(png, left)).slice(0, 3);
      // The chosen background, white (MP4_BACKGROUND), as the board and JPEG renditions show it.
      const clear = await half(0);
      assert.ok(clear.every((c) => c > 240), `white where transparent at ${at} s: ${clear}`);
      const opaque = await half(w / 2 + 8);
      assert.ok(
        opaque[channel] > 150 && Math.min(...opaque) < 80,
        `${["red", "green", "blue"][channel]} at ${at} s: ${opaque}`,
      );
    }
    // The animated preview is a WebP, which has alpha: its transparent half stays transparent.
    const preview = new Uint8Array(
      await (await svc.app.request(`/api/v1/images/${id}/preview`)).arrayBuffer(),
    );
    const [alpha, opaque] = [(await stats(preview, 0))[3], (await stats(preview, w / 2 + 8))[3]];
    assert.ok(alpha < 16 && opaque > 240, `transparent in the preview: ${alpha}, ${opaque}`);
    const shown = (await sharp(preview, { animated: true }).metadata()).delay ?? [];
    assert.equal(shown.reduce((a, b) => a + b, 0), 1000, `the preview's delays: ${shown}`);
  });
}

/** Where an image's white is: `top`/`bottom` (or `left`/`right`) halves' mean brightness. */
async function whiteSide(png: Uint8Array): Promise<{ w: number; h: number; side: string }> {
  const { default: sharp } = await import("sharp");
  const { data, info } = await sharp(png).removeAlpha().raw().toBuffer({ resolveWithObject: true });
  const mean = (x0: number, y0: number, x1: number, y1: number) => {
    let sum = 0;
    for (let y = y0; y < y1; y++) {
      for (let x = x0; x < x1; x++) sum += data[(y * info.width + x) * 3 + 1]; // green: 0 on red
    }
    return sum / ((x1 - x0) * (y1 - y0));
  };
  const [w, h] = [info.width, info.height];
  const sides = {
    top: mean(0, 0, w, h / 4),
    bottom: mean(0, h - h / 4, w, h),
    left: mean(0, 0, w / 4, h),
    right: mean(w - w / 4, 0, w, h),
  };
  const side = Object.entries(sides).sort((a, b) => b[1] - a[1])[0][0];
  return { w, h, side };
}

Deno.test("a rotated phone video reports its displayed sizes; poster and renditions upright", async () => {
  const { status, body } = await post(await rotatedMp4());
  assert.equal(status, 201, JSON.stringify(body));
  assert.deepEqual([body.width, body.height], [120, 160], "portrait, as a player shows it");
  const id = body.short_id as string;
  const thumb = new Uint8Array(
    await (await svc.app.request(`/api/v1/images/${id}/thumbnail`)).arrayBuffer(),
  );
  // The coded frame's left bar, turned as the display matrix says: along the bottom.
  assert.deepEqual(await whiteSide(thumb), { w: 120, h: 160, side: "bottom" });
  const mp4 = await renditionOf(id);
  // The rendition's pixels are upright themselves: no rotation left for a player to apply.
  const probe = await probeJson(mp4, "stream=width,height:stream_side_data=rotation");
  assert.deepEqual([probe.streams[0].width, probe.streams[0].height], [120, 160]);
  assert.equal(probe.streams[0].side_data_list, undefined, "no display matrix");
  const frame = await onFile("ffmpeg", mp4, ONE_PNG);
  assert.deepEqual(await whiteSide(frame), { w: 120, h: 160, side: "bottom" });
  const preview = new Uint8Array(
    await (await svc.app.request(`/api/v1/images/${id}/preview`)).arrayBuffer(),
  );
  assert.deepEqual(await whiteSide(preview), { w: 120, h: 160, side: "bottom" });
});

Deno.test("a still WebP gets no MP4 and no preview (404, not rendition_pending)", async () => {
  const { body } = await post(await makeImage("webp", 40, 30));
  const id = body.short_id as string;
  const image: ImageDto = await (await svc.app.request(`/api/v1/images/${id}`)).json();
  assert.equal(image.video_url, null);
  for (const path of ["video.mp4", "preview"]) {
    const res = await svc.app.request(`/api/v1/images/${id}/${path}`);
    assert.equal(res.status, 404);
    // Not found, as for any still (SPEC's error shape has no code for it).
    assert.equal((await res.json()).code, undefined);
  }
});

Deno.test("refusals: a playlist dressed as an MP4, truncated, a lying size, too long", async () => {
  const mp4 = await makeVideo("mp4");
  const playlist = await post(playlistAsMp4());
  assert.equal(playlist.status, 415);
  assert.deepEqual(playlist.body, {
    code: "unsupported_image",
    detail: "The MP4 file's box sizes do not add up (a size header lies)",
  });
  const text = new TextEncoder().encode("#EXTM3U\n#EXTINF:1,\nfile:///etc/passwd\n");
  const plain = await post(text);
  assert.equal(plain.status, 415);
  assert.equal(plain.body.code, "unsupported_image");

  const cut = await post(truncate(mp4));
  assert.equal(cut.status, 415);
  assert.equal(cut.body.code, "unsupported_image");
  assert.match(cut.body.detail as string, /^The MP4 file is cut short/);

  const lying = await post(lyingMp4(mp4));
  assert.equal(lying.status, 415);
  assert.equal(lying.body.code, "unsupported_image");
  assert.match(lying.body.detail as string, /'mdat' box claims more bytes/);

  const cutWebm = await post(truncate(await makeVideo("webm")));
  assert.equal(cutWebm.status, 415);
  assert.match(cutWebm.body.detail as string, /^The WebM file is cut short/);

  // The same whether FFmpeg reads a file or (its index first) a pipe.
  for (const kind of ["mp4", "mp4_faststart"] as const) {
    const garbled = await post(garbledMp4(await makeVideo(kind)));
    assert.equal(garbled.status, 422);
    assert.deepEqual(garbled.body, {
      code: "video_unreadable",
      detail: "The file has no video stream",
    });

    const long = await post(await makeVideo(kind, 4));
    assert.equal(long.status, 422);
    assert.deepEqual(long.body, {
      code: "video_too_long",
      detail: "The video lasts 4.0 s; at most 3 s are allowed",
      max_seconds: 3,
    });
  }
  const rows = await svc.db.sql`select count(*)::int as n from images where duration_seconds > 3`;
  assert.equal(rows[0].n, 0);
});

Deno.test("a codec off the list is 415, naming the codec and what the container may carry", async () => {
  const { status, body } = await post(await makeVideo("mpeg4"));
  assert.equal(status, 415);
  assert.deepEqual(body, {
    code: "unsupported_image",
    detail: "The video's codec (mpeg4) is not accepted: video/mp4 may carry h264, hevc, av1",
  });
});

Deno.test("without FFmpeg a video is 415 video_unsupported and a GIF still uploads", async () => {
  const off = await startService({ env: { FFMPEG_PATH: "/nowhere/ffmpeg" } });
  try {
    const headers = await authHeader(off.app);
    const res = await upload(off.app, headers, await makeVideo("mp4"), []);
    assert.equal(res.status, 415);
    const body = await res.json();
    assert.equal(body.code, "video_unsupported");
    assert.match(body.detail, /apt-get install ffmpeg/);
    const gif = await upload(off.app, headers, await makeImage("gif", 20, 20), []);
    assert.equal(gif.status, 201);
    // No FFmpeg, no MP4: the route says it is not there yet, and names the original.
    const { short_id } = await gif.json();
    const preview = await off.app.request(`/api/v1/images/${short_id}/preview`);
    assert.equal(preview.status, 404);
    assert.equal((await preview.json()).code, "rendition_pending");
    const mp4 = await off.app.request(`/api/v1/images/${short_id}/video.mp4`);
    assert.equal(mp4.status, 404);
    assert.deepEqual(await mp4.json(), {
      code: "rendition_pending",
      detail: "The MP4 of this image is being made; the original is at /file meanwhile",
    });
    assert.ok(off.logs.some((l) => l.includes("video off")), "the start says video is off");
  } finally {
    await off.close();
  }
});

Deno.test("a video's page plays it and previews it: og:video, a poster image, a JPEG preview", async () => {
  const { body } = await post(await makeVideo("webm"));
  const id = body.short_id as string;
  const page = await (await svc.app.request(`/i/${id}`))
    .text();
  assert.match(
    page,
    new RegExp(`<video src="/api/v1/images/${id}/file" poster="/api/v1/images/${id}/thumbnail"`),
  );
  assert.match(page, /<video [^>]* controls muted loop playsinline preload="metadata">/);
  assert.match(
    page,
    new RegExp(`<meta property="og:video" content="http://localhost/${id}.webm"`),
  );
  assert.match(page, /<meta property="og:video:type" content="video\/webm"/);
  assert.match(
    page,
    new RegExp(
      `<meta property="og:image" content="http://localhost/api/v1/images/${id}/thumbnail"`,
    ),
  );
  const jpeg = await svc.app.request(`/api/v1/images/${id}/preview.jpg`);
  assert.equal(jpeg.status, 200);
  assert.equal(jpeg.headers.get("content-type"), "image/jpeg");
  const bytes = new Uint8Array(await jpeg.arrayBuffer());
  assert.deepEqual([...bytes.subarray(0, 3)], [0xff, 0xd8, 0xff]);
});

/** ffprobe's view of an MP4: its streams and whether its index comes before its data. */
async function probeMp4(bytes: Uint8Array) {
  const { streams } = await probeJson(bytes, "stream=codec_type,codec_name,pix_fmt,width,height");
  const text = new TextDecoder("latin1").decode(bytes.subarray(0, Math.min(bytes.length, 65536)));
  return { streams, faststart: text.indexOf("moov") < text.indexOf("mdat") };
}

async function waitForMp4(id: string): Promise<ImageDto> {
  for (let i = 0; i < 600; i++) {
    const image: ImageDto = await (await svc.app.request(`/api/v1/images/${id}`)).json();
    if (image.video_url !== null) return image;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`no MP4 for ${id} after 60 s`);
}

/** The MP4 rendition of image `id`, once its background job has made it. */
async function renditionOf(id: string): Promise<Uint8Array> {
  await waitForMp4(id);
  return new Uint8Array(
    await (await svc.app.request(`/api/v1/images/${id}/video.mp4`)).arrayBuffer(),
  );
}

Deno.test("a GIF gets an MP4 in the background: H.264, yuv420p, even sizes, faststart, cached", async () => {
  // 161x121: odd sizes, made even.
  const gif = await makeVideo("gif", 2, undefined, "161x121");
  const { body } = await post(gif);
  const id = body.short_id as string;
  const image = await waitForMp4(id);
  assert.equal(image.video_url, `/api/v1/images/${id}/video.mp4`);
  const res = await svc.app.request(`/api/v1/images/${id}/video.mp4`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "video/mp4");
  assert.equal(res.headers.get("etag"), `"${body.hash}-mp4"`);
  assert.match(res.headers.get("cache-control")!, /immutable/);
  const mp4 = new Uint8Array(await res.arrayBuffer());
  const probed = await probeMp4(mp4);
  assert.deepEqual(probed.streams, [
    { codec_name: "h264", codec_type: "video", width: 160, height: 120, pix_fmt: "yuv420p" },
  ]);
  assert.ok(probed.faststart, "the index comes first");

  const again = await svc.app.request(`/api/v1/images/${id}/video.mp4`, {
    headers: { "if-none-match": `"${body.hash}-mp4"` },
  });
  assert.equal(again.status, 304);
  const part = await svc.app.request(`/api/v1/images/${id}/video.mp4`, {
    headers: { range: "bytes=0-99" },
  });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get("content-range"), `bytes 0-99/${mp4.length}`);
  assert.deepEqual(new Uint8Array(await part.arrayBuffer()), mp4.subarray(0, 100));
  const direct = await svc.app.request(`/${id}.mp4`);
  assert.deepEqual(new Uint8Array(await direct.arrayBuffer()), mp4, "the direct link serves it");
  const gifLink = await svc.app.request(`/${id}.gif`);
  assert.deepEqual(new Uint8Array(await gifLink.arrayBuffer()), gif, "the .gif is the original");

  const page = await (await svc.app.request(`/i/${id}`)).text();
  assert.match(page, new RegExp(`<meta property="og:video" content="http://localhost/${id}.mp4"`));

  // Deleted with its image.
  const del = await svc.app.request(`/api/v1/images/${id}`, { method: "DELETE", headers: auth });
  assert.equal(del.status, 204);
  assert.equal(await svc.s3.store.head(videoRenditionKey(id)), null);
  assert.equal(await svc.s3.store.head(previewKey(id)), null);
});

Deno.test("a video's MP4 has no sound; an MP4 upload's direct link stays its original", async () => {
  const bytes = await makeVideo("mp4_sound");
  const { body } = await post(bytes);
  const id = body.short_id as string;
  const mp4 = await renditionOf(id);
  assert.deepEqual((await probeMp4(mp4)).streams.map((s: { codec_type: string }) => s.codec_type), [
    "video",
  ]);
  const direct = new Uint8Array(await (await svc.app.request(`/${id}.mp4`)).arrayBuffer());
  assert.deepEqual(direct, bytes);
});

Deno.test("a still has no MP4 (404 not_found)", async () => {
  const { body } = await post(await makeImage("png", 20, 20));
  assert.equal(body.video_url, null);
  const res = await svc.app.request(`/api/v1/images/${body.short_id}/video.mp4`);
  assert.equal(res.status, 404);
  assert.equal((await res.json()).code, undefined);
});

Deno.test("an animated preview: an animated WebP of at most 400 px and 6 s, cached", async () => {
  const { default: sharp } = await import("sharp");
  // An 8-second 640x480 GIF (a GIF's length is not limited by MAX_VIDEO_SECONDS).
  const { body } = await post(await makeVideo("gif", 8, undefined, "640x480"));
  const id = body.short_id as string;
  const image = await waitForMp4(id);
  assert.equal(image.preview_url, `/api/v1/images/${id}/preview`);
  const res = await svc.app.request(`/api/v1/images/${id}/preview`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get("content-type"), "image/webp");
  assert.equal(res.headers.get("etag"), `"${body.hash}-preview"`);
  assert.match(res.headers.get("cache-control")!, /immutable/);
  const webp = new Uint8Array(await res.arrayBuffer());
  const meta = await sharp(webp, { animated: true }).metadata();
  assert.equal(meta.width, 400);
  assert.equal(meta.pageHeight, 300);
  assert.equal(meta.loop, 0, "loops forever");
  // Identical frames are merged: their delays add up to the 6 s kept.
  assert.equal(meta.delay!.reduce((a, b) => a + b, 0), 6000, "its first 6 s");
  const again = await svc.app.request(`/api/v1/images/${id}/preview`, {
    headers: { "if-none-match": `"${body.hash}-preview"` },
  });
  assert.equal(again.status, 304);
});

Deno.test("a GIF without words in its first frame is read again a few seconds in", async () => {
  const long = await post(await makeVideo("gif", 5));
  assert.equal((await waitForText(long.body.short_id as string)).text, "VIDEO WORDS");
  // Shorter than that: there is no second frame, and no words.
  const short = await post(await makeVideo("gif", 2));
  assert.equal((await waitForText(short.body.short_id as string)).text, "");
});
