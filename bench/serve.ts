/**
 * The service under benchmark, in its own process: built from the environment by
 * wiring/service.ts exactly as main.ts builds it (config, resources, migrations, thumbnail pool,
 * job queue, app, the delete sweeper, the perceptual-hash backfill, caption recognition), served
 * with Deno.serve on HOST:PORT (PORT=0 picks a free port). Prints `{"port": n}` on stdout once
 * listening; SIGTERM stops it. BENCH_NO_WARMUP=1 leaves the upload path cold (B2's first-upload
 * rows); BENCH_NO_OCR=1 leaves caption recognition out (before/after rows). With BENCH_LOOP_FILE
 * set, a 1 ms timer watches the event loop: START_SIGNAL (tests/_harness/measure_signals.ts)
 * starts a window, STOP_SIGNAL writes there its longest gap, the most CPU time the main thread
 * ran between two ticks (the longest it held the loop, whatever the machine's load) and the gaps
 * over 5 and 20 ms.
 */
import { loadConfig } from "../adapters/config.ts";
import { buildService } from "../wiring/service.ts";
import { writeSide } from "../wiring/write_side.ts";
import { watchEventLoop } from "../tests/_harness/loop_watch.ts";
import { START_SIGNAL, STOP_SIGNAL } from "../tests/_harness/measure_signals.ts";

const service = await buildService({
  config: loadConfig(),
  writes: writeSide,
  warmUp: Deno.env.get("BENCH_NO_WARMUP") !== "1",
  recognition: Deno.env.get("BENCH_NO_OCR") === "1" ? false : "engine",
  jobsGraceMs: 1000,
});
const { config } = service;
const server = Deno.serve({
  port: config.PORT,
  hostname: config.HOST,
  onListen: ({ port }) => console.log(JSON.stringify({ port, workers: config.THUMBNAIL_WORKERS })),
}, service.app.fetch);

const loopFile = Deno.env.get("BENCH_LOOP_FILE");
if (loopFile) {
  let watch: ReturnType<typeof watchEventLoop> | null = null;
  Deno.addSignalListener(START_SIGNAL, () => {
    watch?.stop();
    watch = watchEventLoop();
  });
  Deno.addSignalListener(STOP_SIGNAL, () => {
    if (!watch) return;
    // Written beside it, then renamed: a reader polling for the file never sees half of it (a
    // test once parsed it mid-write and failed on "Unexpected end of JSON input").
    Deno.writeTextFileSync(`${loopFile}.part`, JSON.stringify(watch.stop()));
    Deno.renameSync(`${loopFile}.part`, loopFile);
    watch = null;
  });
}

Deno.addSignalListener("SIGTERM", async () => {
  await Promise.race([server.shutdown(), new Promise((r) => setTimeout(r, 2000))]);
  await service.close();
  Deno.exit(0);
});
