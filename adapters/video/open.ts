/** FFmpeg as the configuration says, or null when it is not installed (video is then off). */
import type { Config } from "../config.ts";
import type { Logger } from "../log.ts";
import { Ffmpeg } from "./ffmpeg.ts";

/**
 * Opens FFmpeg at FFMPEG_PATH with the configured limits; null, with a warning that names what to
 * install, when it is missing or does not run. The board starts either way.
 */
export async function openVideo(
  config: Pick<
    Config,
    "FFMPEG_PATH" | "FFMPEG_TIMEOUT_SECONDS" | "FFMPEG_MEMORY_MB" | "FFMPEG_WORKERS"
  >,
  log: Logger,
): Promise<Ffmpeg | null> {
  try {
    const ffmpeg = await Ffmpeg.open({
      ffmpegPath: config.FFMPEG_PATH,
      timeoutMs: config.FFMPEG_TIMEOUT_SECONDS * 1000,
      memoryBytes: config.FFMPEG_MEMORY_MB * 1024 * 1024,
      concurrency: config.FFMPEG_WORKERS,
    });
    log.info("video on", {
      ffmpeg: config.FFMPEG_PATH,
      memory_limit: ffmpeg.prlimit ? `${config.FFMPEG_MEMORY_MB} MB` : "none (no prlimit)",
      nice: ffmpeg.nice ? 10 : "none (no nice)",
    });
    return ffmpeg;
  } catch (err) {
    log.warn("video off: video uploads are refused", { err: (err as Error).message });
    return null;
  }
}
