/**
 * The health prober of B3 and B10, in a process of its own (bench/_health_prober.ts).
 *
 * @module
 */
import { START_SIGNAL, STOP_SIGNAL } from "../../tests/_harness/measure_signals.ts";
import { spawnReady } from "./processes.ts";
import type { LoopGaps } from "../../tests/_harness/loop_watch.ts";

const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

/** How often the health prober of B3 and B10 asks. */
export const PROBE_INTERVAL_MS = 10;

/** What the prober saw: every latency, the failures, and how late its own timer ran at most. */
export interface Probes {
  latencies: number[];
  errors: number;
  lag: number;
}

/**
 * Probes `${base}/api/v1/health` every PROBE_INTERVAL_MS on a fixed schedule, from a process of
 * its own (bench/_health_prober.ts), while `during` runs (for at most `maxMs`: the prober stops
 * itself then).
 */
export async function probeWhile(
  base: string,
  during: () => Promise<unknown>,
  maxMs = 120_000,
): Promise<Probes> {
  const file = await Deno.makeTempFile({ prefix: "bench-probe-" });
  try {
    const prober = await spawnReady("bench/_health_prober.ts", {
      URL: `${base}/api/v1/health`,
      INTERVAL_MS: String(PROBE_INTERVAL_MS),
      RESULT_FILE: file,
      MAX_MS: String(maxMs),
    });
    Deno.kill(prober.pid, START_SIGNAL);
    await during();
    Deno.kill(prober.pid, STOP_SIGNAL);
    await prober.exited;
    return JSON.parse(await Deno.readTextFile(file));
  } finally {
    await Deno.remove(file).catch(() => {});
  }
}

/**
 * What the service's event loop saw while `during` ran (bench/serve.ts with BENCH_LOOP_FILE =
 * `file`): its longest gap, the gaps over 5 and 20 ms, and the most CPU its thread ran at once.
 */
export async function serviceGap(pid: number, file: string, during: () => Promise<unknown>) {
  Deno.kill(pid, START_SIGNAL);
  await during();
  Deno.kill(pid, STOP_SIGNAL);
  for (let i = 0; i < 100; i++) {
    const text = await Deno.readTextFile(file).catch(() => "");
    if (text) {
      await Deno.remove(file);
      return JSON.parse(text) as LoopGaps;
    }
    await sleep(20);
  }
  throw new Error("the service did not report its event-loop gaps");
}
