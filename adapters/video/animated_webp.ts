/**
 * The frames of an animated WebP for FFmpeg: Debian's FFmpeg 5.1 cannot decode animated WebP
 * (its decoder refuses the ANIM/ANMF chunks), so sharp (libvips, libwebp's demuxer) decodes them
 * and FFmpeg reads raw frames from a pipe (`-f rawvideo`): RGBA, or, for an output without alpha
 * (the MP4), RGB composited over a background. The frames are sampled at a fixed rate, each shown
 * for its own delay (a frame of 300 ms is written three times at 10 fps), so the timing survives
 * the constant-rate pipe.
 *
 * Bounded so that a huge animation neither exhausts memory nor holds the event loop: sharp decodes
 * in libuv's threads, CHUNK_PIXELS at a time (one chunk of frames is held, then written); at most
 * `maxSeconds` of it and MAX_FRAMES frames are decoded, and at most MAX_DECODED_PIXELS pixels in
 * all; what lies past a bound is left out, as a video past MAX_VIDEO_SECONDS is cut.
 *
 * @module
 */
import sharp from "sharp";
import { isAnimatedWebp } from "../../domain/image_sniff.ts";

/** Frames decoded at most (a 20 fps animation of a minute). */
export const MAX_FRAMES = 1200;
/** Pixels decoded at most over all frames (in chunks: never all held at once). */
export const MAX_DECODED_PIXELS = 400_000_000;
/** Pixels decoded at once: one chunk of frames, four bytes each (RGBA), the most held. */
export const CHUNK_PIXELS = 16_000_000;
/** The rate the frames are sampled at, for FFmpeg's constant-rate raw input. */
export const WEBP_FPS = 20;

/**
 * An animation as FFmpeg's raw input: its size, rate, pixel format, and the frames in order.
 */
export interface RawFrames {
  width: number;
  height: number;
  fps: number;
  /** FFmpeg's name of the frames' pixel format: with alpha, or flattened on a background. */
  pixFmt: "rgba" | "rgb24";
  /** Each frame's bytes, `width * height * 4` (3 when flattened), as many as its delay asks. */
  frames: AsyncIterable<Uint8Array>;
}

/** How the frames are decoded. */
export interface WebpFrameOptions {
  fps?: number;
  /**
   * The colour transparent pixels are composited over (`#ffffff`), for an output without alpha
   * (an H.264 MP4, whose yuv420p would otherwise show whatever colour lies under a transparent
   * pixel: black, or the encoder's leftovers); unset, the alpha channel is kept.
   */
  background?: string;
  limits?: { frames: number; pixels: number; chunkPixels: number };
}

/**
 * Browsers show a frame of a delay of 10 ms or less for 100 ms (a delay of 0 would otherwise spin
 * through the animation at once); libvips reads a missing delay as 100 ms too.
 */
const delayMs = (d: number | undefined) => (d === undefined || d <= 10 ? 100 : d);

/**
 * How long one loop of the animated GIF or WebP `bytes` lasts, in seconds, its frames' delays
 * read as browsers (and FFmpeg's GIF demuxer) read them (delayMs); 0 when the header gives no
 * delays. The header alone is read.
 */
export async function animationSeconds(bytes: Uint8Array): Promise<number> {
  const meta = await sharp(bytes, { limitInputPixels: false }).metadata().catch(() => null);
  return (meta?.delay ?? []).reduce((sum, d) => sum + delayMs(d), 0) / 1000;
}

/**
 * The frames of the animated WebP `bytes` for its first `maxSeconds`, within the bounds above;
 * null when it is not an animated WebP (one frame: a still image).
 */
export async function webpFrames(
  bytes: Uint8Array,
  maxSeconds: number,
  {
    fps = WEBP_FPS,
    background,
    limits = { frames: MAX_FRAMES, pixels: MAX_DECODED_PIXELS, chunkPixels: CHUNK_PIXELS },
  }: WebpFrameOptions = {},
): Promise<RawFrames | null> {
  if (!isAnimatedWebp(bytes)) return null;
  // The header alone: sizes, frame count and delays, no pixel decoded.
  const meta = await sharp(bytes, { limitInputPixels: false }).metadata();
  const width = meta.width!;
  const height = meta.pageHeight ?? meta.height!;
  const pages = meta.pages ?? 1;
  if (pages < 2 || !(width > 0) || !(height > 0)) return null;
  const pixels = width * height;
  const channels = background ? 3 : 4;
  const delays = meta.delay ?? [];
  // How many frames start within maxSeconds, within MAX_FRAMES and MAX_DECODED_PIXELS.
  let count = 0;
  for (let t = 0; count < pages && t < maxSeconds * 1000; count++) t += delayMs(delays[count]);
  count = Math.max(1, Math.min(count, limits.frames, Math.floor(limits.pixels / pixels)));
  const perChunk = Math.max(1, Math.floor(limits.chunkPixels / pixels));
  const slots = Math.max(1, Math.round(maxSeconds * fps));

  async function* frames(): AsyncGenerator<Uint8Array> {
    let written = 0; // output frames so far
    let end = 0; // where the current frame's time ends, in ms
    for (let first = 0; first < count && written < slots; first += perChunk) {
      const n = Math.min(perChunk, count - first);
      const decoded = sharp(bytes, { page: first, pages: n, limitInputPixels: false });
      const { data } = await (background ? decoded.flatten({ background }) : decoded.ensureAlpha())
        .raw()
        .toBuffer({ resolveWithObject: true });
      const size = pixels * channels;
      for (let i = 0; i < n && written < slots; i++) {
        const frame = new Uint8Array(data.buffer, data.byteOffset + i * size, size);
        end += delayMs(delays[first + i]);
        // The output slots whose time falls before this frame's end show it (a frame shorter
        // than a slot may show in none); the first frame shows at least once.
        const upTo = Math.min(slots, Math.max(written === 0 ? 1 : 0, Math.round(end * fps / 1000)));
        while (written < upTo) {
          yield frame;
          written++;
        }
      }
    }
  }
  return { width, height, fps, pixFmt: background ? "rgb24" : "rgba", frames: frames() };
}
