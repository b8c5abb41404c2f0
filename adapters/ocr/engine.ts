/**
 * An OCR engine as CaptionReader uses it: a child process (ocr_process.ts) running tesseract.js,
 * talked to over stdin/stdout. A process, not just a worker thread, because a time limit must
 * stop the work: Deno's worker terminate() lets a thread that is busy in a recognition run on to
 * its end (seconds for a page of small print), while a process is killed at once. The engine was
 * chosen over Debian's `tesseract` CLI, which read no better, answered 3x slower per image and
 * needs a system package (bench/caption_quality.ts).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import sharp from "sharp";
import { FrameReader, readReply, requestHeader, Status } from "./frames.ts";
import type { Picture } from "./preprocess.ts";

/** A warm engine: reads one picture at a time (calls queue). */
export interface Engine {
  /** Tesseract's TSV for a picture. */
  recognizeTsv(picture: Picture): Promise<string>;
  /** Kills the process at once, even in the middle of a recognition. */
  terminate(): Promise<void>;
  /** Rejects when the process dies or its replies break; never resolves. */
  crashed: Promise<never>;
  /** The OCR process's id (its threads: /proc/PID/task). */
  pid: number;
  /** Whether it has died or been terminated. */
  readonly dead: boolean;
}

/** The engine's process died or broke: the engine is replaced, not used again. */
export class EngineCrashed extends Error {
  override name = "EngineCrashed";
}

const PROCESS = fileURLToPath(new URL("./ocr_process.ts", import.meta.url));
const CONFIG = fileURLToPath(new URL("../../deno.json", import.meta.url));
/** A start that takes longer is a broken one: a hang guard far above a first start's time. */
const START_TIMEOUT_MS = 60_000;

/** A caption-sized picture, read at start so that the first real image pays no JIT. */
let warmUp: Promise<Picture> | undefined;
function warmUpPicture(): Promise<Picture> {
  warmUp ??= sharp(Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="480" height="120"><rect width="100%" ` +
      `height="100%" fill="white"/><text x="20" y="80" font-family="DejaVu Sans" ` +
      `font-weight="bold" font-size="56">WARM UP</text></svg>`,
  )).greyscale().toColourspace("b-w").raw().toBuffer().then((px) => {
    const header = new TextEncoder().encode("P5\n480 120\n255\n");
    const pgm = new Uint8Array(header.length + px.length);
    pgm.set(header);
    pgm.set(px, header.length);
    return { pgm };
  });
  return warmUp;
}

/** What deno itself needs from the environment to find its cache; no setting of the service. */
const DENO_ENV = ["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"];

/**
 * The OCR process's command line and its whole environment. The process reads pictures and
 * writes text, and holds nothing of the service: its environment is cleared to what deno needs
 * (no JWT_SECRET, ADMIN_PASSWORD, storage or database credentials); it may read only the npm
 * packages (code, wasm core, model) and its own modules' folder (the OCR thread loads
 * ocr_worker.ts and what it imports from there), and set its threads' priority; no network, no
 * writes, no environment, no subprocesses (engine_test.ts). `script` is the process's module,
 * replaced by a probe in the tests.
 */
export function ocrCommand(script = PROCESS): { args: string[]; env: Record<string, string> } {
  const readable = [join(dirname(CONFIG), "node_modules"), dirname(PROCESS)];
  const args = ["run", "--quiet", "--no-prompt", `--config=${CONFIG}`];
  args.push(`--allow-read=${readable.join(",")}`, "--allow-sys=setPriority", script);
  const env: Record<string, string> = {};
  for (const key of DENO_ENV) {
    const value = Deno.env.get(key);
    if (value !== undefined) env[key] = value;
  }
  return { args, env };
}

/**
 * Spawns the OCR process under `nice`, so that every thread of it, V8's compiler and GC helpers
 * included, runs at the lowest priority (19); without a `nice` binary the process nices its own
 * threads (ocr_process.ts). `nice` adds its adjustment to the spawning thread's value, which is
 * the event loop's (EVENT_LOOP_NICE, adapters/event_loop.ts), and the kernel caps the sum at 19: an
 * adjustment of 39 reaches 19 from any value a thread can have (-20 at the least).
 */
function spawn(): Deno.ChildProcess {
  const { args, env } = ocrCommand();
  const options = {
    stdin: "piped",
    stdout: "piped",
    stderr: "inherit",
    clearEnv: true,
    env,
  } as const;
  try {
    return new Deno.Command("nice", { args: ["-n", "39", Deno.execPath(), ...args], ...options })
      .spawn();
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
    return new Deno.Command(Deno.execPath(), { args, ...options }).spawn();
  }
}

/** Starts an OCR process and waits until it has read a first picture. */
export async function startEngine(): Promise<Engine> {
  const child = spawn();
  const replies = new FrameReader(child.stdout);
  const requests = child.stdin.getWriter();
  let fail: (reason: unknown) => void = () => {};
  let dead = false;
  const crashed = new Promise<never>((_, reject) => {
    fail = (reason) => {
      dead = true;
      reject(reason);
    };
  });
  crashed.catch(() => {}); // observed by whoever races it; an idle crash is not unhandled
  const exited = child.status.then((s) => {
    fail(new EngineCrashed(`OCR process exited (${s.signal ?? s.code})`));
  });
  let queue: Promise<unknown> = Promise.resolve();
  /** Sends a picture and reads the reply, after the previous one: one picture at a time. */
  const exchange = (picture: Picture) => {
    const done = queue.then(async () => {
      await requests.write(requestHeader(picture.pgm.length, picture.enclosed ?? 0));
      await requests.write(picture.pgm);
      const r = await readReply(replies).catch((err) => {
        throw new EngineCrashed("OCR process broke its replies", { cause: err });
      });
      if (!r) throw new EngineCrashed("OCR process closed its output");
      if (r.status === Status.Error) throw new Error(r.body);
      return r;
    });
    queue = done.catch((err) => {
      if (err instanceof EngineCrashed) terminate();
    });
    return Promise.race([done, crashed]);
  };
  const terminate = async () => {
    fail(new EngineCrashed("OCR engine terminated"));
    try {
      child.kill("SIGKILL");
    } catch { /* already gone */ }
    await exited;
    await requests.abort().catch(() => {});
    await replies.cancel();
  };
  const timer = setTimeout(() => terminate(), START_TIMEOUT_MS);
  try {
    const ready = await exchange(await warmUpPicture());
    if (ready.status !== Status.Ready) throw new EngineCrashed("OCR process did not start");
  } catch (err) {
    await terminate();
    throw err;
  } finally {
    clearTimeout(timer);
  }
  return {
    recognizeTsv: async (picture) => (await exchange(picture)).body,
    terminate,
    crashed,
    pid: child.pid,
    get dead() {
      return dead;
    },
  };
}
