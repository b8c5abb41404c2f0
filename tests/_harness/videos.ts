/**
 * Video fixtures made by FFmpeg on the fly (issue 45): MP4 and WebM with and without sound, a GIF,
 * an animated WebP, and the hostile ones (a playlist dressed as an MP4, a truncated file, a lying
 * size header). Each call draws its own colour, so every fixture has its own content hash.
 */
import { randomColor } from "./images.ts";

/** Debian's FFmpeg, where the tests expect it. */
export const FFMPEG = "/usr/bin/ffmpeg";

export type VideoFixture =
  | "mp4"
  | "mp4_sound"
  | "mp4_faststart"
  | "hevc"
  | "mpeg4"
  | "webm"
  | "webm_sound"
  | "gif"
  | "webp";

const OUTPUT: Record<VideoFixture, { ext: string; args: string[] }> = {
  mp4: { ext: "mp4", args: ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-an"] },
  mp4_sound: { ext: "mp4", args: ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac"] },
  // Its index first, as sites hand them out: FFmpeg reads it through a pipe (sniffVideo()).
  mp4_faststart: {
    ext: "mp4",
    args: ["-c:v", "libx264", "-pix_fmt", "yuv420p", "-c:a", "aac", "-movflags", "+faststart"],
  },
  hevc: { ext: "mp4", args: ["-c:v", "libx265", "-pix_fmt", "yuv420p", "-an", "-tag:v", "hvc1"] },
  // MPEG-4 Part 2 in an MP4: a codec the board refuses.
  mpeg4: { ext: "mp4", args: ["-c:v", "mpeg4", "-an"] },
  webm: { ext: "webm", args: ["-c:v", "libvpx-vp9", "-b:v", "200k", "-an"] },
  webm_sound: { ext: "webm", args: ["-c:v", "libvpx", "-b:v", "200k", "-c:a", "libopus"] },
  gif: { ext: "gif", args: [] },
  webp: { ext: "webp", args: ["-c:v", "libwebp_anim", "-loop", "0"] },
};

/**
 * `kind` of `seconds` at `size` (160x120), 10 fps: a black first half second (a poster must not be it),
 * then a coloured field with a white box.
 */
export async function makeVideo(
  kind: VideoFixture,
  seconds = 2,
  color = randomColor(),
  size = "160x120",
): Promise<Uint8Array> {
  const hex = [color.r, color.g, color.b].map((c) => c.toString(16).padStart(2, "0")).join("");
  const sound = kind.endsWith("_sound");
  const out = OUTPUT[kind];
  return await ffmpegFile(out.ext, [
    "-f",
    "lavfi",
    "-i",
    `color=c=0x${hex}:s=${size}:r=10:d=${seconds},` +
    `drawbox=x=60:y=40:w=40:h=40:color=white:t=fill,fade=in:st=0:d=0.5`,
    ...(sound ? ["-f", "lavfi", "-i", `sine=frequency=440:duration=${seconds}`] : []),
    ...out.args,
    "-t",
    String(seconds),
  ]);
}

/** Runs FFmpeg with `args`, writing `out.<ext>` in a temporary folder; returns that file. */
export async function ffmpegFile(ext: string, args: string[]): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "video-fixture-" });
  try {
    await ffmpeg([...args, `${dir}/out.${ext}`]);
    return await Deno.readFile(`${dir}/out.${ext}`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Converts `input` (a GIF, say) to an H.264 MP4, as a site that hands out "GIFs" does. */
export async function toMp4(input: Uint8Array, ext = "gif"): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "video-fixture-" });
  try {
    await Deno.writeFile(`${dir}/in.${ext}`, input);
    await ffmpeg([
      "-i",
      `${dir}/in.${ext}`,
      "-vf",
      "scale=trunc(iw/2)*2:trunc(ih/2)*2",
      "-c:v",
      "libx264",
      "-pix_fmt",
      "yuv420p",
      "-movflags",
      "+faststart",
      `${dir}/out.mp4`,
    ]);
    return await Deno.readFile(`${dir}/out.mp4`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** An HLS playlist that names a local file, with an MP4's leading `ftyp` box. */
export function playlistAsMp4(): Uint8Array {
  const ftyp = new Uint8Array([
    0,
    0,
    0,
    20,
    ...ascii("ftypisom"),
    0,
    0,
    2,
    0,
    ...ascii("isom"),
  ]);
  const text = ascii("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nfile:///etc/passwd\n");
  return concat(ftyp, text);
}

/** `bytes` cut to `fraction` of its length. */
export function truncate(bytes: Uint8Array, fraction = 0.6): Uint8Array {
  return bytes.slice(0, Math.floor(bytes.length * fraction));
}

/** The MP4 with its `mdat` box claiming a megabyte more than it holds. */
export function lyingMp4(bytes: Uint8Array): Uint8Array {
  return withBox(bytes, "mdat", (view, pos, size) => view.setUint32(pos, size + 1_000_000));
}

/** The MP4 with its `moov` box's contents overwritten: whole in structure, unreadable. */
export function garbledMp4(bytes: Uint8Array): Uint8Array {
  return withBox(bytes, "moov", (view, pos, size) => {
    new Uint8Array(view.buffer).fill(0x41, pos + 8, pos + size);
  });
}

/** A copy of the MP4 `bytes` with its top-level `type` box changed by `change`. */
function withBox(
  bytes: Uint8Array,
  type: string,
  change: (view: DataView, pos: number, size: number) => void,
): Uint8Array {
  const out = bytes.slice();
  const view = new DataView(out.buffer);
  for (let pos = 0; pos + 8 <= out.length;) {
    const size = view.getUint32(pos);
    if (String.fromCharCode(...out.subarray(pos + 4, pos + 8)) === type) {
      change(view, pos, size);
      return out;
    }
    pos += size;
  }
  throw new Error(`no ${type} box`);
}

async function ffmpeg(args: string[]): Promise<void> {
  const { success, stderr } = await new Deno.Command(FFMPEG, {
    args: ["-hide_banner", "-loglevel", "error", "-y", ...args],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).output();
  if (!success) throw new Error(`ffmpeg: ${new TextDecoder().decode(stderr)}`);
}

function ascii(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

/** A still picture (`ext` its format) as a one-second animated GIF at 5 fps. */
export async function stillAsGif(input: Uint8Array, ext = "jpg"): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "video-fixture-" });
  try {
    await Deno.writeFile(`${dir}/in.${ext}`, input);
    await ffmpeg(["-loop", "1", "-i", `${dir}/in.${ext}`, "-t", "1", "-r", "5", `${dir}/out.gif`]);
    return await Deno.readFile(`${dir}/out.gif`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/**
 * A phone's portrait video: 160x120 coded (a red field, a white bar down its left side, 2 s), with
 * a display rotation of a quarter turn in its track header (`rotate=90`, which FFmpeg writes as a
 * display matrix): shown 120x160, the bar along the bottom.
 */
export async function rotatedMp4(): Promise<Uint8Array> {
  const dir = await Deno.makeTempDir({ prefix: "video-fixture-" });
  try {
    await ffmpeg([
      "-f",
      "lavfi",
      "-i",
      "color=c=red:s=160x120:r=10:d=2,drawbox=x=0:y=0:w=40:h=120:color=white:t=fill",
      "-c:v",
      "libx264",
      "-pix_fmt",
      "yuv420p",
      `${dir}/plain.mp4`,
    ]);
    await ffmpeg([
      "-i",
      `${dir}/plain.mp4`,
      "-c",
      "copy",
      "-metadata:s:v:0",
      "rotate=90",
      `${dir}/rotated.mp4`,
    ]);
    return await Deno.readFile(`${dir}/rotated.mp4`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}
