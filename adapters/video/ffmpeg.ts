/**
 * FFmpeg behind a small interface: probe a video and take its representative frame, with each run
 * confined. Untrusted bytes are written to a private temporary file and read through it alone,
 * or (an upload's probe and poster of a video read front to back: inspect()) written to the run's
 * standard input, when it opens no file at all:
 *
 * - no shell: `Deno.Command` with an argument list, and `clearEnv: true` (no secret of the
 *   service's environment reaches the child);
 * - the demuxer the sniffer found is forced (`-f mov` or `-f webm`), so no other is probed, and
 *   `-protocol_whitelist file,pipe` (`pipe` alone for standard input) keeps an uploaded playlist or
 *   reference from opening another file's protocol or the network (`concat`, `hls`, `http`,
 *   `tcp`... are refused);
 * - a time limit (the child is killed), a memory limit (`prlimit --as`, util-linux, when it is
 *   installed: there is no shell to run `ulimit -v` in; without prlimit the time limit and the
 *   bounded output are the only bounds, which the start-up log says), low priority (`nice -n 10`,
 *   a background run `nice -n 19`);
 * - at most `concurrency` runs at once in each of two lanes, the others waiting in turn: the
 *   upload path's (an upload's probe and poster, started together in one slot: inspect()) for at
 *   most their own time limit (then `VideoBusyError`), the background's (renditions, previews,
 *   caption frames) for at most BACKGROUND_WAIT_MS. A rendition that takes a minute never holds
 *   the slot an upload's probe needs (B17's upload rows: with one lane, each MP4 upload waited for
 *   the rendition before it).
 *
 * @module
 */

import { Slots } from "../../domain/slots.ts";
import { animationSeconds, type RawFrames, webpFrames } from "./animated_webp.ts";

/** FFmpeg is not installed where FFMPEG_PATH points (or next to it, `ffprobe`). */
export class FfmpegMissingError extends Error {
  override name = "FfmpegMissingError";
}

/** A run failed: the input is not what its header says, or FFmpeg could not read it. */
export class FfmpegRunError extends Error {
  override name = "FfmpegRunError";
}

/** A run took longer than its time limit and was killed. */
export class FfmpegTimeoutError extends Error {
  override name = "FfmpegTimeoutError";
}

/** Every run slot stayed taken for the whole wait. */
export class VideoBusyError extends Error {
  override name = "VideoBusyError";
}

/** The input demuxers a sniffed moving image may be read with (domain/image_sniff.ts). */
export type Demuxer = "mov" | "webm" | "gif";

/**
 * What a rendition is made from: a demuxer's input, or `webp`, an animated WebP decoded by sharp
 * and piped to FFmpeg as raw frames (adapters/video/animated_webp.ts).
 */
export type Source = Demuxer | "webp";

/** Where a frame is taken from, and for whom. */
export interface FrameOptions {
  signal?: AbortSignal;
  /** Where the seconds it is chosen from start (a caption's second try). */
  fromSeconds?: number;
  /** A background job's (a caption's): its lane, not the upload path's. */
  background?: boolean;
  /**
   * The frame's longest side at most (a poster needs no more than the thumbnail's): the frames
   * it is chosen among are scaled down first, which the choice costs much less on.
   */
  maxSide?: number;
}

/** What an MP4 rendition is made with. */
export interface Mp4Options {
  /** This run's time limit (ms), instead of the configured one: a transcode takes longer. */
  timeoutMs: number;
  /** Seconds of input transcoded at most. */
  maxSeconds: number;
}

/** What ffprobe says of a video's first video stream and its container (sizes as displayed). */
export interface VideoProbe {
  /** The video stream's codec (`h264`, `hevc`, `av1`, `vp8`, `vp9`...). */
  codec: string;
  width: number;
  height: number;
  /** Seconds; the container's, else the video stream's. */
  duration: number;
  /** Whether it has an audio stream. */
  audio: boolean;
}

/** How the runs are confined. */
export interface FfmpegOptions {
  /** The ffmpeg binary; ffprobe is taken from the same folder. */
  ffmpegPath: string;
  /** Longest one run may take before it is killed (ms). */
  timeoutMs: number;
  /** The address-space limit of one run (bytes), applied with prlimit when present. */
  memoryBytes: number;
  /** Runs at once. */
  concurrency: number;
  /** prlimit's path; null: none (the limit is not applied). Default /usr/bin/prlimit if present. */
  prlimitPath?: string | null;
  /** nice's path; null: none. Default /usr/bin/nice if present. */
  nicePath?: string | null;
  /** How long a run started ahead waits for an upload before it is stopped (ms). */
  standbyIdleMs?: number;
}

/** Most bytes of a run's output kept (a PNG frame of the largest allowed video fits). */
const MAX_STDOUT_BYTES = 256 * 1024 * 1024;
/** Most bytes of a run's error output kept: its last line goes into the error. */
const MAX_STDERR_BYTES = 16 * 1024;
/**
 * The seconds of video whose keyframes the representative frame is first looked for in. In an MP4
 * (H.264, H.265) only keyframes are decoded (one in every few dozen frames), so this costs a few
 * frames however long it is (B17's upload rows). FFmpeg 5.1's VP9 and AV1 decoders decode every
 * frame whatever `-skip_frame` says: a WebM's are looked for in no more than the fallback's
 * seconds, so it never decodes more than the window did before (an AV1 MP4 may: 10 s at worst).
 */
const KEY_SECONDS: Readonly<Record<Demuxer, number>> = { mov: 10, webm: 2, gif: 0 };
/**
 * A keyframe whose mean luma (8-bit, black 16 in limited range) is at most this is dark: a fade-in
 * or a black first frame, never a poster (tests/video_test.ts, "black first keyframe").
 */
const DARK_LUMA = 48;
/**
 * A keyframe whose luma histogram's entropy, out of 8 bits, is at most this is flat: one shade (a
 * white flash, a grey fade), never a poster. A field of one colour with a box is 0.05.
 */
const FLAT_ENTROPY = 0.02;
/**
 * When every keyframe is dark or flat, the seconds of video the frame is chosen from: long
 * enough to pass a fade-in from black, and all of it is decoded while an upload waits.
 */
const FRAME_SECONDS = 2;
/** The frames a second among which it is then chosen (not all of them: B17's upload rows). */
const FRAME_RATE = 10;
/** What the transparent pixels of an animated WebP are composited over in its MP4. */
export const MP4_BACKGROUND = "#ffffff";
/**
 * How long a run started ahead (inspect(): an upload's probe and keyframe run) waits for its input
 * by default before it is stopped: after a minute without an upload no FFmpeg waits (issue 45's
 * item 7: engines stop after a minute without work).
 */
export const STANDBY_IDLE_MS = 60_000;
/** The input of a run that reads its bytes from standard input. */
const PIPE = "pipe:0";
/** How long a run's output may stay open after the process has exited. */
const PIPE_GRACE_MS = 1000;
/**
 * Longest a background run waits for its lane: behind a few renditions, each bounded by its own
 * limit (VIDEO_RENDITION_TIMEOUT_SECONDS); then VideoBusyError, and its job is retried later.
 */
export const BACKGROUND_WAIT_MS = 10 * 60_000;

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/** ffprobe beside `ffmpegPath` (`/usr/bin/ffmpeg` → `/usr/bin/ffprobe`). */
export function ffprobePath(ffmpegPath: string): string {
  const slash = ffmpegPath.lastIndexOf("/");
  return `${ffmpegPath.slice(0, slash + 1)}ffprobe`;
}

/** Runs of ffmpeg and ffprobe, confined as the module says. */
export class Ffmpeg {
  readonly #slots: Slots;
  readonly #backgroundSlots: Slots;
  readonly #limit: string[];
  /** Runs started ahead, waiting on standard input, by their command line (#standBy()). */
  readonly #ready = new Map<string, StandBy>();
  #closed = false;

  private constructor(
    readonly options: FfmpegOptions,
    readonly prlimit: string | null,
    readonly nice: string | null,
  ) {
    const busy = () => new VideoBusyError("Every video slot stayed busy; try again shortly");
    this.#slots = new Slots(options.concurrency, options.timeoutMs, busy);
    this.#backgroundSlots = new Slots(options.concurrency, BACKGROUND_WAIT_MS, busy);
    this.#limit = prlimit ? [prlimit, `--as=${options.memoryBytes}`, "--"] : [];
  }

  /** The command line before the binary: the memory limit, then the lane's priority. */
  #prefix(background: boolean): string[] {
    return [...this.#limit, ...(this.nice ? [this.nice, "-n", background ? "19" : "10"] : [])];
  }

  /** FFmpeg at `options.ffmpegPath` with ffprobe beside it, or FfmpegMissingError. */
  static async open(options: FfmpegOptions): Promise<Ffmpeg> {
    const probe = ffprobePath(options.ffmpegPath);
    for (const path of [options.ffmpegPath, probe]) {
      if (!await isFile(path)) {
        throw new FfmpegMissingError(
          `${path} is not there: install FFmpeg (Debian: apt-get install ffmpeg) or set ` +
            "FFMPEG_PATH to its ffmpeg (ffprobe beside it)",
        );
      }
    }
    const find = async (given: string | null | undefined, fallback: string) =>
      given === undefined ? (await isFile(fallback) ? fallback : null) : given;
    const ffmpeg = new Ffmpeg(
      options,
      await find(options.prlimitPath, "/usr/bin/prlimit"),
      await find(options.nicePath, "/usr/bin/nice"),
    );
    // One probe of nothing proves the binaries run here (a wrong architecture, a missing library).
    await ffmpeg.#run(ffmpeg.options.ffmpegPath, ["-hide_banner", "-version"], {});
    return ffmpeg;
  }

  /** Runs going on now, in both lanes. */
  get running(): number {
    return this.#slots.held + this.#backgroundSlots.held;
  }

  /** What ffprobe finds in `bytes` read with `demuxer` alone. */
  async probe(bytes: Uint8Array, demuxer: Demuxer, signal?: AbortSignal): Promise<VideoProbe> {
    return await this.#withInput(bytes, async (path) => {
      const out = await this.#run(ffprobePath(this.options.ffmpegPath), probeArgs(demuxer, path), {
        signal,
      });
      return parseProbe(new TextDecoder().decode(out));
    });
  }

  /**
   * An upload's probe and poster together: one slot of the upload path's lane, and ffprobe and
   * the frame's ffmpeg started at once, so the poster does not wait for the probe (B17's upload
   * rows). Resolves with the probe; `poster` is the frame to come (frame() with `maxSide`). A
   * failed probe stops the frame's run, as does `signal` (both); the slot (and the file) are held
   * until both runs have ended.
   *
   * A `streamable` input (sniffVideo(): read front to back) goes to both through standard input,
   * to processes started ahead of it (#standBy()): FFmpeg's start-up, most of each run, is then
   * paid before the upload arrives (B17's upload row), and `-protocol_whitelist pipe` lets neither
   * open a file. Any other is written to a temporary file that both read.
   */
  async inspect(
    bytes: Uint8Array,
    demuxer: Demuxer,
    { signal, maxSide, streamable = false }: {
      signal?: AbortSignal;
      maxSide?: number;
      streamable?: boolean;
    } = {},
  ): Promise<{ probe: VideoProbe; poster: Promise<Uint8Array> }> {
    const slot = await this.#slots.take(this.options.timeoutMs);
    const stop = new AbortController();
    const both = signal ? AbortSignal.any([signal, stop.signal]) : stop.signal;
    let path: string | null = null;
    let handedOn = false; // the slot and the file are then released when both runs have ended
    try {
      if (!streamable) {
        path = await Deno.makeTempFile({ prefix: "reaction-video-" });
        await Deno.writeFile(path, bytes);
      }
      const input = path ?? PIPE;
      // Only the first choice's run is started ahead: the fallback's (every keyframe dark) is rare.
      const run = (binary: string, args: string[], ahead: boolean) =>
        this.#spawn(binary, args, {
          signal: both,
          ...(path === null ? { input: [bytes], ahead } : {}),
        });
      const poster = chooseFrame(
        demuxer,
        input,
        { maxSide },
        (args, first) => run(this.options.ffmpegPath, args, first),
      );
      const probe = run(ffprobePath(this.options.ffmpegPath), probeArgs(demuxer, input), true)
        .then((out) => parseProbe(new TextDecoder().decode(out)));
      const file = path;
      handedOn = true;
      Promise.allSettled([poster, probe]).then(async () => {
        slot[Symbol.dispose]();
        if (file !== null) await Deno.remove(file).catch(() => {});
      });
      poster.catch(() => {}); // the caller's, when it wants it
      try {
        return { probe: await probe, poster };
      } catch (err) {
        stop.abort(err);
        throw err;
      }
    } finally {
      if (!handedOn) {
        slot[Symbol.dispose]();
        if (path !== null) await Deno.remove(path).catch(() => {});
      }
    }
  }

  /** Stops the runs started ahead; inspect() then starts none. */
  async close(): Promise<void> {
    this.#closed = true;
    const ready = [...this.#ready.values()];
    this.#ready.clear();
    await Promise.all(ready.map((r) => r.discard()));
  }

  /**
   * A PNG of the representative frame (chooseFrame(): the first keyframe that is neither dark nor
   * flat, else the one chosen among the first seconds' frames), from `fromSeconds` on.
   */
  async frame(
    bytes: Uint8Array,
    demuxer: Demuxer,
    { signal, fromSeconds = 0, background = false, maxSide }: FrameOptions = {},
  ): Promise<Uint8Array> {
    return await this.#withInput(bytes, async (path) =>
      await chooseFrame(
        demuxer,
        path,
        { fromSeconds, maxSide },
        (args) => this.#run(this.options.ffmpegPath, args, { signal, background }),
      ));
  }

  /**
   * The MP4 rendition of a moving image: H.264, yuv420p, even dimensions, no sound, `faststart`
   * (its index first, so a player starts before the whole file has arrived).
   */
  async mp4(
    bytes: Uint8Array,
    demuxer: Source,
    options: Mp4Options,
    signal?: AbortSignal,
  ): Promise<Uint8Array> {
    return await this.#transcode(
      bytes,
      demuxer,
      options,
      "mp4",
      "scale=trunc(iw/2)*2:trunc(ih/2)*2",
      [
        "-c:v",
        "libx264",
        "-preset",
        "veryfast",
        "-crf",
        "26",
        "-pix_fmt",
        "yuv420p",
        "-movflags",
        "+faststart",
      ],
      signal,
    );
  }

  /**
   * The animated preview of a moving image for the library's grid: an animated WebP (which every
   * browser shows in an `<img>`), looping, 10 frames a second, its longest side at most
   * `maxSide`, its first `maxSeconds` only, no sound.
   */
  async preview(
    bytes: Uint8Array,
    demuxer: Source,
    options: Mp4Options & { maxSide: number },
    signal?: AbortSignal,
  ): Promise<Uint8Array> {
    return await this.#transcode(
      bytes,
      demuxer,
      options,
      "webp",
      `fps=10,${fit(options.maxSide)}`,
      [
        "-c:v",
        "libwebp_anim",
        "-loop",
        "0",
        "-quality",
        "60",
      ],
      signal,
    );
  }

  /**
   * The first video stream of `bytes` (no sound, subtitles, data or metadata), its first
   * `maxSeconds` through `filter`, encoded by `encode` as `format`. Written to a file: MP4's
   * `faststart` moves the index after the fact, which a pipe cannot do. An animated WebP's frames
   * come from sharp through standard input instead.
   */
  async #transcode(
    bytes: Uint8Array,
    demuxer: Source,
    options: Mp4Options,
    format: "mp4" | "webp",
    filter: string,
    encode: string[],
    signal?: AbortSignal,
  ): Promise<Uint8Array> {
    if (demuxer === "webp") {
      // An MP4 has no alpha: transparent pixels are composited over white, as the board shows
      // them and as a transparent image's JPEG rendition is made (adapters/thumbnails); the
      // animated WebP preview keeps its transparency, as a WebP thumbnail does.
      const frames = await webpFrames(bytes, options.maxSeconds, {
        background: format === "mp4" ? MP4_BACKGROUND : undefined,
      });
      if (!frames) throw new FfmpegRunError("The WebP is not animated: it has no video to make");
      const path = await Deno.makeTempFile({ prefix: "reaction-video-" });
      try {
        return await this.#encode(rawInputArgs(frames), path, options, format, filter, encode, {
          signal,
          input: frames.frames,
        });
      } finally {
        await Deno.remove(path).catch(() => {});
      }
    }
    // FFmpeg 5.1 ends a GIF's video where its last frame starts, so a loop would flash that
    // frame: at the demuxer's 100 frames a second, it is held (cloned) without end, and the
    // output cut where the GIF ends, its delays added up (tests/video_test.ts, "lasts as long as
    // the gif").
    const length = demuxer === "gif" ? await animationSeconds(bytes) : 0;
    const held = length > 0 ? `fps=100,tpad=stop_mode=clone:stop=-1,${filter}` : filter;
    return await this.#withInput(
      bytes,
      (path) =>
        this.#encode(inputArgs(demuxer, path, "-loglevel"), path, options, format, held, encode, {
          signal,
          seconds: length > 0 ? Math.min(length, options.maxSeconds) : undefined,
        }),
    );
  }

  /** One encode of the input `input` names to `${path}.${format}`; the bytes written there. */
  async #encode(
    input: string[],
    path: string,
    options: Mp4Options,
    format: "mp4" | "webp",
    filter: string,
    encode: string[],
    { signal, input: stdin, seconds = options.maxSeconds }: {
      signal?: AbortSignal;
      input?: AsyncIterable<Uint8Array>;
      /** Where the output ends at most (the input's first maxSeconds are read). */
      seconds?: number;
    },
  ): Promise<Uint8Array> {
    {
      const out = `${path}.${format}`;
      try {
        await this.#run(
          this.options.ffmpegPath,
          [
            "-hide_banner",
            "-nostdin",
            "-t",
            String(options.maxSeconds),
            ...input,
            "-map",
            "0:v:0",
            "-an",
            "-sn",
            "-dn",
            "-vf",
            filter,
            "-t",
            String(seconds),
            ...encode,
            "-map_metadata",
            "-1",
            "-f",
            format,
            "-y",
            `file:${out}`,
          ],
          { signal, timeoutMs: options.timeoutMs, background: true, input: stdin },
        );
        return await Deno.readFile(out);
      } finally {
        await Deno.remove(out).catch(() => {});
      }
    }
  }

  async #withInput<T>(bytes: Uint8Array, use: (path: string) => Promise<T>): Promise<T> {
    const path = await Deno.makeTempFile({ prefix: "reaction-video-" });
    try {
      await Deno.writeFile(path, bytes);
      return await use(path);
    } finally {
      await Deno.remove(path).catch(() => {});
    }
  }

  /**
   * One confined run of `binary` in its lane; its standard output, or a FfmpegRunError or
   * FfmpegTimeoutError. `timeoutMs`: this run's limit (default the configured one).
   */
  async #run(binary: string, args: string[], options: RunOptions): Promise<Uint8Array> {
    using _slot = options.background
      ? await this.#backgroundSlots.take()
      : await this.#slots.take(options.timeoutMs ?? this.options.timeoutMs);
    return await this.#spawn(binary, args, options);
  }

  /** The confined process of `binary args`, started now. */
  #start(binary: string, args: string[], background: boolean, input: boolean): Deno.ChildProcess {
    const [command, ...rest] = [...this.#prefix(background), binary, ...args];
    return new Deno.Command(command, {
      args: rest,
      clearEnv: true,
      stdin: input ? "piped" : "null",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
  }

  /**
   * The process of `binary args` (an upload-lane run reading standard input) started ahead, if one
   * waits, else started now; either way another is started ahead for the next such run once this
   * one has ended (`ended`), at the lane's low priority while it starts.
   */
  #takeReady(binary: string, args: string[], ended: Promise<unknown>): Deno.ChildProcess {
    const key = JSON.stringify([binary, args]);
    const ready = this.#ready.get(key);
    this.#ready.delete(key);
    ended.then(() => {
      if (this.#closed || this.#ready.has(key)) return;
      try {
        this.#ready.set(key, this.#standBy(binary, args, key));
      } catch { /* not started (the binary gone, no process left): the next run starts its own */ }
    });
    const child = ready?.take();
    if (child) return child;
    void ready?.discard();
    return this.#start(binary, args, false, true);
  }

  /** A process of `binary args` started ahead: stopped after STANDBY_IDLE_MS without a run. */
  #standBy(binary: string, args: string[], key: string): StandBy {
    const child = this.#start(binary, args, false, true);
    child.unref(); // a process that waits for work keeps nothing alive
    let exited = false;
    const status = child.status.then(() => void (exited = true), () => void (exited = true));
    const discard = async () => {
      clearTimeout(idle);
      child.ref(); // its end is awaited
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
      await Promise.all([
        child.stdin.close().catch(() => {}),
        child.stdout.cancel().catch(() => {}),
        child.stderr.cancel().catch(() => {}),
        status,
      ]);
    };
    const standBy: StandBy = {
      take: () => {
        clearTimeout(idle);
        if (exited) return null;
        child.ref();
        return child;
      },
      discard,
    };
    const idle = setTimeout(() => {
      if (this.#ready.get(key) !== standBy) return;
      this.#ready.delete(key);
      void discard();
    }, this.options.standbyIdleMs ?? STANDBY_IDLE_MS);
    Deno.unrefTimer(idle);
    return standBy;
  }

  /** One confined run of `binary`, its lane's slot held by the caller. */
  async #spawn(
    binary: string,
    args: string[],
    { signal, timeoutMs = this.options.timeoutMs, background = false, input, ahead = false }:
      RunOptions,
  ): Promise<Uint8Array> {
    signal?.throwIfAborted();
    const ended = Promise.withResolvers<void>();
    const child = ahead && input
      ? this.#takeReady(binary, args, ended.promise)
      : this.#start(binary, args, background, input !== undefined);
    let timedOut = false;
    const kill = () => {
      try {
        child.kill("SIGKILL");
      } catch { /* already gone */ }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, timeoutMs);
    signal?.addEventListener("abort", kill, { once: true });
    // A child of FFmpeg's (none of Debian's does this; a wrapper script may) could keep the pipes
    // open after the kill: once the process has exited, its output gets PIPE_GRACE_MS more.
    const pipes = new AbortController();
    let grace: ReturnType<typeof setTimeout> | undefined;
    const status = child.status.then((s) => {
      grace = setTimeout(() => pipes.abort(), PIPE_GRACE_MS);
      return s;
    });
    // The input is written as FFmpeg reads it (one chunk of frames held at a time); a decoding
    // that fails stops the run, and FFmpeg that stops reading ends the writing.
    let inputError: unknown = null;
    const feeding = input
      ? feed(child.stdin, input).catch((err) => {
        inputError = err;
        kill();
      })
      : null;
    try {
      const [stdout, stderr] = await Promise.all([
        readCapped(child.stdout, MAX_STDOUT_BYTES, kill, pipes.signal),
        readCapped(child.stderr, MAX_STDERR_BYTES, null, pipes.signal),
        status,
        feeding,
      ]);
      const { success, code } = await status;
      if (timedOut) {
        throw new FfmpegTimeoutError(`FFmpeg ran past its ${timeoutMs} ms limit and was stopped`);
      }
      signal?.throwIfAborted();
      if (inputError) {
        throw new FfmpegRunError(`The frames could not be decoded: ${inputError}`, {
          cause: inputError,
        });
      }
      if (!success) {
        const last = new TextDecoder().decode(stderr).trim().split("\n").at(-1) ?? "";
        throw new FfmpegRunError(`FFmpeg could not read the video: ${last || `exit ${code}`}`);
      }
      return stdout;
    } finally {
      clearTimeout(timer);
      clearTimeout(grace);
      signal?.removeEventListener("abort", kill);
      ended.resolve();
    }
  }
}

/** A process started ahead of its run (Ffmpeg.#standBy()). */
interface StandBy {
  /** The process, now the taker's; null when it has exited meanwhile. */
  take(): Deno.ChildProcess | null;
  /** Kills it and closes its pipes. */
  discard(): Promise<void>;
}

/** How one run is made. */
interface RunOptions {
  signal?: AbortSignal;
  /** This run's limit (default the configured one). */
  timeoutMs?: number;
  /** A background job's: its lane and priority. */
  background?: boolean;
  /** Written to its standard input (raw frames, a video's bytes), else it has none. */
  input?: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
  /** With `input`: its process may be one started ahead (#takeReady()). */
  ahead?: boolean;
}

/** ffprobe's arguments: the first video stream's codec, sizes and rotation, the duration. */
function probeArgs(demuxer: Demuxer, path: string): string[] {
  return [
    ...inputArgs(demuxer, path, "-v"),
    "-show_entries",
    "format=duration:stream=codec_type,codec_name,width,height,duration" +
    ":stream_tags=rotate:stream_side_data=rotation",
    "-of",
    "json",
  ];
}

/** Where a frame is chosen from, and its size. */
interface FrameSpan {
  fromSeconds?: number;
  maxSide?: number;
}

/**
 * The representative frame of the input at `path`, as a PNG: its first keyframe that is neither
 * dark nor flat (keyframeArgs(): one run that decodes a few frames), and only when there is none
 * (the run writes nothing) the one chosen among the first seconds' frames (windowArgs(), a second
 * run that decodes FRAME_SECONDS of video). A GIF's frames are all chosen among (its caption's second
 * frame; its poster is sharp's frame 0). A failed run is not retried: its error is the answer.
 */
async function chooseFrame(
  demuxer: Demuxer,
  path: string,
  span: FrameSpan,
  run: (args: string[], first: boolean) => Promise<Uint8Array>,
): Promise<Uint8Array> {
  if (demuxer !== "gif") {
    const key = await run(keyframeArgs(demuxer, path, span), true);
    if (key.length > 0) return key;
  }
  return nonEmpty(await run(windowArgs(demuxer, path, span), false));
}

/** The filter that scales a frame down to fit within `maxSide`, keeping its aspect. */
const fit = (maxSide: number) =>
  `scale=w='min(${maxSide},iw)':h='min(${maxSide},ih)':force_original_aspect_ratio=decrease`;

/** The filter that fits a frame within `maxSide` (none without), then `next` (a filter chain). */
function fitThen(maxSide: number | undefined, next: string): string {
  return maxSide ? `${fit(maxSide)},${next}` : next;
}

/**
 * ffmpeg's arguments for the representative frame: the first keyframe of the KEY_SECONDS from
 * `fromSeconds` that is neither dark (mean luma at most DARK_LUMA, by `signalstats`) nor flat
 * (luma entropy at most FLAT_ENTROPY, by `entropy`), as a PNG on standard output; when there is
 * none it writes nothing. Other frames are not decoded where the decoder allows it (`-skip_frame
 * nokey`) and never chosen (`select=key`: VP9 and AV1 decode them anyway). Each is scaled before
 * it is measured, in 8 bits (`format=yuv420p`: a 10-bit video's black is not bright).
 */
function keyframeArgs(demuxer: Demuxer, path: string, { fromSeconds = 0, maxSide }: FrameSpan) {
  const checks = "format=yuv420p," +
    "signalstats,metadata=mode=select:key=lavfi.signalstats.YAVG:function=greater:" +
    `value=${DARK_LUMA},` +
    "entropy,metadata=mode=select:key=lavfi.entropy.normalized_entropy.normal.Y:" +
    `function=greater:value=${FLAT_ENTROPY}`;
  return frameRunArgs(demuxer, path, {
    fromSeconds,
    seconds: KEY_SECONDS[demuxer],
    skip: "nokey",
    filter: `select=key,${fitThen(maxSide, checks)}`,
  });
}

/**
 * ffmpeg's arguments for the representative frame among the first FRAME_SECONDS (from
 * `fromSeconds`), FRAME_RATE frames a second of them (FFmpeg's `thumbnail` filter: the frame
 * nearest the average, so not a black fade-in), as a PNG on standard output.
 */
function windowArgs(demuxer: Demuxer, path: string, { fromSeconds = 0, maxSide }: FrameSpan) {
  return frameRunArgs(demuxer, path, {
    fromSeconds,
    seconds: FRAME_SECONDS,
    // Frames no other frame is predicted from (most B-frames) are not decoded: skipping them
    // changes no frame that is (no drift), and the frame is chosen among the rest.
    skip: "noref",
    filter: `fps=${FRAME_RATE},${fitThen(maxSide, `thumbnail=n=${FRAME_SECONDS * FRAME_RATE}`)}`,
  });
}

/**
 * ffmpeg's arguments for one frame of the input's first video stream as a PNG on standard output:
 * `seconds` of it from `fromSeconds`, the frames `skip` names left undecoded, through `filter`.
 */
function frameRunArgs(
  demuxer: Demuxer,
  path: string,
  { fromSeconds, seconds, skip, filter }: {
    fromSeconds: number;
    seconds: number;
    /** FFmpeg's `-skip_frame`: which frames the decoder may leave out. */
    skip: string;
    filter: string;
  },
): string[] {
  return [
    "-hide_banner",
    "-nostdin",
    ...(fromSeconds > 0 ? ["-ss", String(fromSeconds)] : []),
    "-t",
    String(seconds),
    "-skip_frame",
    skip,
    ...inputArgs(demuxer, path, "-loglevel"),
    "-map",
    "0:v:0",
    "-an",
    "-vf",
    filter,
    "-frames:v",
    "1",
    "-f",
    "image2pipe",
    "-c:v",
    "png",
    "pipe:1",
  ];
}

/** A frame run's output, or FfmpegRunError when it found none. */
function nonEmpty(out: Uint8Array): Uint8Array {
  if (out.length === 0) throw new FfmpegRunError("FFmpeg found no frame to show");
  return out;
}

/**
 * Writes `input` to `stdin`, then closes it. FFmpeg that exits before reading it all (an error, a
 * kill) breaks the pipe: the writing stops there, and the run's status says why.
 */
async function feed(
  stdin: WritableStream<Uint8Array>,
  input: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
) {
  const writer = stdin.getWriter();
  try {
    for await (const chunk of input) await writer.write(chunk);
    await writer.close();
  } catch (err) {
    if (err instanceof Deno.errors.BrokenPipe || err instanceof Deno.errors.ConnectionReset) return;
    await writer.abort(err).catch(() => {});
    throw err;
  }
}

/** The input options of raw frames on standard input: quiet, the rawvideo demuxer, pipe only. */
function rawInputArgs(frames: RawFrames): string[] {
  return [
    "-loglevel",
    "error",
    "-protocol_whitelist",
    "pipe",
    "-f",
    "rawvideo",
    "-pix_fmt",
    frames.pixFmt,
    "-s",
    `${frames.width}x${frames.height}`,
    "-framerate",
    String(frames.fps),
    "-i",
    "pipe:0",
  ];
}

/**
 * The input options of every run: quiet, one demuxer, file and pipe protocols only (`path` PIPE:
 * standard input, and the pipe protocol alone).
 */
function inputArgs(demuxer: Demuxer, path: string, logFlag: "-v" | "-loglevel"): string[] {
  return [
    logFlag,
    "error",
    "-protocol_whitelist",
    path === PIPE ? "pipe" : "file,pipe",
    "-f",
    demuxer,
    "-i",
    path === PIPE ? PIPE : `file:${path}`,
  ];
}

/** Reads a stream, keeping at most `max` bytes; past that, `overflow` (or the rest is dropped). */
async function readCapped(
  stream: ReadableStream<Uint8Array>,
  max: number,
  overflow: (() => void) | null,
  stop: AbortSignal,
): Promise<Uint8Array> {
  const parts: Uint8Array[] = [];
  let total = 0;
  const reader = stream.getReader();
  const cancel = () => reader.cancel().catch(() => {});
  stop.addEventListener("abort", cancel, { once: true });
  while (true) {
    const { done, value: part } = await reader.read();
    if (done) break;
    if (total + part.length > max) {
      if (overflow) {
        overflow();
        throw new FfmpegRunError("FFmpeg's output was larger than allowed");
      }
      // Error output: keep the most recent part, where the reason is.
      parts.splice(0, parts.length);
      total = 0;
    }
    parts.push(part);
    total += part.length;
  }
  stop.removeEventListener("abort", cancel);
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** ffprobe's JSON, reduced to the first video stream; FfmpegRunError when there is none. */
export function parseProbe(json: string): VideoProbe {
  let parsed: {
    format?: { duration?: string };
    streams?: {
      codec_type?: string;
      codec_name?: string;
      width?: number;
      height?: number;
      duration?: string;
      tags?: { rotate?: string };
      side_data_list?: { rotation?: number }[];
    }[];
  };
  try {
    parsed = JSON.parse(json);
  } catch {
    throw new FfmpegRunError("ffprobe's answer could not be read");
  }
  const streams = parsed.streams ?? [];
  const video = streams.find((s) => s.codec_type === "video");
  if (!video || !video.codec_name || !(video.width! > 0) || !(video.height! > 0)) {
    throw new FfmpegRunError("The file has no video stream");
  }
  const duration = Number(parsed.format?.duration ?? video.duration);
  if (!Number.isFinite(duration) || duration <= 0) {
    throw new FfmpegRunError("The video's duration could not be read");
  }
  // A phone's portrait video is coded landscape with a display rotation (a display matrix, or an
  // older `rotate` tag): its displayed sizes are the coded ones swapped. FFmpeg applies the
  // rotation when it decodes (autorotate), so posters and renditions come out upright.
  const rotation = Number(
    video.side_data_list?.find((d) => d.rotation !== undefined)?.rotation ?? video.tags?.rotate ??
      0,
  );
  const quarter = Math.abs(Math.round(rotation)) % 180 === 90;
  return {
    codec: video.codec_name,
    width: quarter ? video.height! : video.width!,
    height: quarter ? video.width! : video.height!,
    duration,
    audio: streams.some((s) => s.codec_type === "audio"),
  };
}
