/** What one running service instance is made of; built by wiring/service.ts's buildService(). */
import type { Sql } from "../db/client.ts";
import type { Config } from "../adapters/config.ts";
import type { Logger } from "../adapters/log.ts";
import type { JobQueue } from "../adapters/jobs/mod.ts";
import type { ObjectStore } from "../adapters/storage/mod.ts";
import type { UploadState } from "./upload/state.ts";
import type { PasswordHasher } from "./passwords.ts";

/** Thumbnail generation, as the upload path sees it (the worker pool implements it). */
export interface Thumbnailer {
  thumbnail(
    input: Uint8Array,
    signal?: AbortSignal,
  ): Promise<{ data: Uint8Array; width: number; height: number; phash: bigint | null }>;
  /**
   * A JPEG at most `maxSide` px on its longest side (a GIF's first frame): the renditions for
   * chat clients (services/renditions.ts). Absent: renditions are only served, never made.
   */
  jpeg?(
    input: Uint8Array,
    maxSide: number,
    signal?: AbortSignal,
  ): Promise<{ data: Uint8Array; width: number; height: number }>;
}

/**
 * Video probing and frames, as the upload path sees it (adapters/video/ffmpeg.ts implements it);
 * `demuxer` is the one the sniffer found, never another.
 */
export interface VideoTool {
  probe(bytes: Uint8Array, demuxer: "mov" | "webm", signal?: AbortSignal): Promise<{
    codec: string;
    width: number;
    height: number;
    duration: number;
    audio: boolean;
  }>;
  /**
   * An upload's probe and its poster (frame() at `maxSide`) at once, in one run slot: the probe
   * when it is read, the poster to come; a failed probe or `signal` stops the poster's run. A
   * `streamable` video (sniffVideo()) is read from a pipe by processes started ahead of it.
   */
  inspect(
    bytes: Uint8Array,
    demuxer: "mov" | "webm",
    options?: { signal?: AbortSignal; maxSide?: number; streamable?: boolean },
  ): Promise<{ probe: Awaited<ReturnType<VideoTool["probe"]>>; poster: Promise<Uint8Array> }>;
  /** Stops what it keeps running between uploads (processes started ahead of them). */
  close(): Promise<void>;
  /**
   * A PNG of the representative frame (from `fromSeconds`): the first keyframe that is neither
   * dark nor flat, else the one chosen among the first seconds' frames; its longest side at most
   * `maxSide`. A `background` job's run waits in its own lane, never in the upload path's.
   */
  frame(
    bytes: Uint8Array,
    demuxer: "mov" | "webm" | "gif",
    options?: {
      signal?: AbortSignal;
      fromSeconds?: number;
      background?: boolean;
      maxSide?: number;
    },
  ): Promise<Uint8Array>;
  /**
   * The MP4 rendition (H.264, no sound, faststart) of a video, a GIF or (`webp`) an animated WebP.
   */
  mp4(
    bytes: Uint8Array,
    demuxer: "mov" | "webm" | "gif" | "webp",
    options: { timeoutMs: number; maxSeconds: number },
    signal?: AbortSignal,
  ): Promise<Uint8Array>;
  /** The animated WebP preview (looping, at most `maxSide` px and `maxSeconds`) of the same. */
  preview(
    bytes: Uint8Array,
    demuxer: "mov" | "webm" | "gif" | "webp",
    options: { timeoutMs: number; maxSeconds: number; maxSide: number },
    signal?: AbortSignal,
  ): Promise<Uint8Array>;
}

/** The dependencies of the app. The reader has no thumbnailer: it serves reads only. */
export interface Services {
  config: Config;
  sql: Sql;
  /**
   * A one-connection pool of its own for the health check, so that a pool busy with a flood of
   * requests is not taken for a database that is down; without it, health uses `sql`.
   */
  probeSql?: Sql;
  /**
   * A pool whose statements run with generic plans (createSql's `genericPlans`), for the
   * autocomplete and the caption search; without it, they set the mode in a transaction on `sql`.
   */
  searchSql?: Sql;
  store: ObjectStore;
  log: Logger;
  thumbnails?: Thumbnailer;
  /**
   * FFmpeg for video uploads; null when the write side found none (video uploads answer 415
   * `video_unsupported`, health's details say video is off); absent on the reader.
   */
  video?: VideoTool | null;
  /** The durable job queue, where background work is sent; the reader has none. */
  jobs?: JobQueue;
  /**
   * What this instance's uploads share (originals being written, uploads in flight); the reader
   * has none, and createApp() gives an app built without one its own.
   */
  uploads?: UploadState;
  /** Password hashing (default: scrypt at OWASP's parameters, services/passwords.ts). */
  passwords?: PasswordHasher;
}

/** Reads the words printed on an image (adapters/ocr/recognizer.ts in the service). */
export interface CaptionReading {
  read(image: Uint8Array, signal?: AbortSignal): Promise<{ text: string }>;
}
