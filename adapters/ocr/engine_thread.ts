/**
 * One tesseract.js engine in this process: a worker thread (ocr_worker.ts, nice 19) running the
 * WebAssembly build of Tesseract with the English LSTM model (`4.0.0_best_int`), everything
 * loaded from node_modules. It runs inside the OCR process (ocr_process.ts), never in the
 * service: Deno's worker terminate() does not stop a thread that is busy in a recognition (it
 * ends at the thread's next event-loop turn), while a process can be killed at once.
 *
 * @module
 */
import type { Buffer } from "node:buffer";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import eng from "@tesseract.js-data/eng";
import { createWorker, OEM, PSM, type Worker } from "tesseract.js";
import { ENCLOSED_OPTION } from "./enclosed.ts";
import type { Picture } from "./preprocess.ts";

/** A warm engine: reads one picture at a time (calls queue in its thread). */
export interface ThreadEngine {
  /** Tesseract's TSV for a picture (the enclosed-region filter applied in the engine's thread). */
  recognizeTsv(picture: Picture): Promise<string>;
  /** Rejects if the thread dies (an uncaught error in it); never resolves otherwise. */
  crashed: Promise<never>;
}

/**
 * The model's folder inside the data package. The package's own `langPath` names the larger
 * legacy+LSTM model; the LSTM-only `best_int` one beside it is what the engine runs.
 */
const LANG_PATH = join(dirname((eng as { langPath: string }).langPath), "4.0.0_best_int");
const WORKER_PATH = fileURLToPath(new URL("./ocr_worker.ts", import.meta.url));

/** Starts an engine and reads `warmUp` with it, so that the first real picture pays no JIT. */
export async function startThreadEngine(warmUp: Picture): Promise<ThreadEngine> {
  let fail: (reason: unknown) => void = () => {};
  const crashed = new Promise<never>((_, reject) => (fail = reject));
  crashed.catch(() => {}); // observed by whoever races it; an idle crash is not unhandled
  const worker: Worker = await createWorker("eng", OEM.LSTM_ONLY, {
    workerPath: WORKER_PATH,
    langPath: LANG_PATH,
    gzip: true,
    // The default writes eng.traineddata into the working directory as a cache.
    cacheMethod: "none",
    // Without a handler, a failed job throws on the main thread as an uncaught exception.
    errorHandler: () => {},
  });
  const thread =
    (worker as unknown as { worker?: { on?: (e: string, f: (x: unknown) => void) => void } })
      .worker;
  thread?.on?.("error", (err) => fail(new Error("OCR thread failed", { cause: err })));
  thread?.on?.("exit", (code) => fail(new Error(`OCR thread exited (${code})`)));
  await worker.setParameters({
    tessedit_pageseg_mode: PSM.SINGLE_BLOCK,
    user_defined_dpi: "300",
    // Tesseract's own diagnostics ("Image too small to scale!!") would go to stdout.
    debug_file: "/dev/null",
  });
  const recognizeTsv = async (picture: Picture) => {
    const { data } = await worker.recognize(
      picture.pgm as unknown as Buffer,
      (picture.enclosed ? { [ENCLOSED_OPTION]: picture.enclosed } : {}) as object,
      { text: false, blocks: false, tsv: true },
    );
    return data.tsv ?? "";
  };
  await recognizeTsv(warmUp);
  return { recognizeTsv, crashed };
}
