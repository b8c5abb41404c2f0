/**
 * A video upload's checks (issue 45): the container the sniffer recognised, its structure whole,
 * then FFmpeg's probe (adapters/video/) for the codec, the size and the length; and its poster,
 * the representative frame, made into the WebP thumbnail and perceptual hash by the same pool as
 * an image's, so a GIF and its MP4 copy are near-duplicates.
 */
import { sniffVideo, UnsupportedImageError, type VideoType } from "../../domain/image_sniff.ts";
import { AppError } from "../../domain/errors.ts";
import { FfmpegRunError, FfmpegTimeoutError, VideoBusyError } from "../../adapters/video/ffmpeg.ts";
import type { Services, Thumbnailer } from "../deps.ts";
import { THUMBNAIL_MAX_SIDE } from "../../domain/thumbnail_size.ts";

/** The codecs each container may carry; any other is refused (415). */
export const VIDEO_CODECS: Readonly<Record<VideoType, readonly string[]>> = {
  "video/mp4": ["h264", "hevc", "av1"],
  "video/webm": ["vp8", "vp9", "av1"],
};

/** What the header and the probe say of an accepted video. */
export interface ProbedVideo {
  type: VideoType;
  demuxer: "mov" | "webm";
  width: number;
  height: number;
  /** Seconds, to the millisecond. */
  duration: number;
  /** Its representative frame, a PNG at the thumbnail's size, made as the probe was read. */
  poster: Promise<Uint8Array>;
}

/** What is said to a client when FFmpeg is not there. */
export const VIDEO_OFF_MESSAGE = "Video uploads are off on this board: it needs FFmpeg. Install " +
  "Debian's ffmpeg package (apt-get install ffmpeg) or set FFMPEG_PATH to an ffmpeg with " +
  "ffprobe beside it; images, GIFs included, are accepted as usual";

/**
 * The video in `bytes`, checked, with its poster on the way (its run started with the probe's,
 * stopped by `signal`: the caller aborts it once the upload is refused or needs no poster); null
 * when the bytes are not an MP4 or WebM at all. Refusals: `video_unsupported` (no FFmpeg),
 * `unsupported_image` (cut short, lying sizes, a codec not allowed), `video_unreadable` (FFmpeg
 * cannot read it), `video_too_long`, `video_busy`.
 */
export async function probeVideo(
  services: Pick<Services, "video" | "config">,
  bytes: Uint8Array,
  signal: AbortSignal,
): Promise<ProbedVideo | null> {
  const sniffed = sniffVideo(bytes);
  if (!sniffed) return null;
  if (!services.video) throw new AppError("video_unsupported", VIDEO_OFF_MESSAGE);
  // Cut short or lying sizes: not a video the board can take, as any other bytes it cannot (415),
  // whatever the name says; the message names what is wrong.
  if (sniffed.problem) throw new UnsupportedImageError(sniffed.problem);
  const { probe, poster } = await ffmpegStep(() =>
    services.video!.inspect(bytes, sniffed.demuxer, {
      signal,
      maxSide: THUMBNAIL_MAX_SIDE,
      streamable: sniffed.streamable,
    })
  );
  const allowed = VIDEO_CODECS[sniffed.type];
  if (!allowed.includes(probe.codec)) {
    throw new UnsupportedImageError(
      `The video's codec (${probe.codec}) is not accepted: ${sniffed.type} may carry ` +
        `${allowed.join(", ")}`,
    );
  }
  const max = services.config.MAX_VIDEO_SECONDS;
  if (probe.duration > max) {
    throw new AppError(
      "video_too_long",
      `The video lasts ${probe.duration.toFixed(1)} s; at most ${max} s are allowed`,
      { fields: { max_seconds: max } },
    );
  }
  return {
    type: sniffed.type,
    demuxer: sniffed.demuxer,
    width: probe.width,
    height: probe.height,
    duration: Math.round(probe.duration * 1000) / 1000,
    poster,
  };
}

/**
 * The video's poster as the thumbnail pool makes an image's (WebP thumbnail and perceptual hash),
 * from its representative frame at the thumbnail's size (the thumbnail is no larger).
 */
export async function videoThumbnail(
  services: Pick<Services, "thumbnails">,
  video: ProbedVideo,
  signal: AbortSignal,
): ReturnType<Thumbnailer["thumbnail"]> {
  if (!services.thumbnails) throw new Error("no thumbnailer");
  const frame = await ffmpegStep(() => video.poster);
  signal.throwIfAborted();
  return await services.thumbnails.thumbnail(frame, signal);
}

/** An FFmpeg step, its failures as the API's errors. */
async function ffmpegStep<T>(run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (err instanceof VideoBusyError) {
      throw new AppError("video_busy", "Too many videos are being processed; try again shortly");
    }
    if (err instanceof FfmpegRunError || err instanceof FfmpegTimeoutError) {
      throw new AppError("video_unreadable", err.message, { cause: err });
    }
    throw err;
  }
}
