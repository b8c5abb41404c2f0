/**
 * The health prober of B3 and B10, in a process of its own (bench/_health_prober.ts).
 *
 * @module
 */
import { START_SIGNAL, STOP_SIGNAL } from "../../tests/_harness/measure_signals.ts";
import { spawnReady } from "./processes.ts";

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
 * its own (bench/_health_prober.ts), while `during` runs.
 */
export async function probeWhile(base: string, during: () => Promise<unknown>): Promise<Probes> {
  const file = await Deno.makeTempFile({ prefix: "bench-probe-" });
  try {
    const prober = await spawnReady("bench/_health_prober.ts", {
      URL: `${base}/api/v1/health`,
      INTERVAL_MS: String(PROBE_INTERVAL_MS),
      RESULT_FILE: file,
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
