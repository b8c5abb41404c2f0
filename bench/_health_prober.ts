/**
 * B3's health prober in a process of its own: starts a GET of URL every INTERVAL_MS (default
 * 10) on a fixed schedule, never waiting for the previous answer, so a stalled service shows as
 * the probes that queue behind the stall instead of as one slow probe among many quick ones.
 * Prints `{"ready": true}`, probes from START_SIGNAL to STOP_SIGNAL (or MAX_MS), then writes
 * `{"latencies": [...], "errors": n, "lag": ms}` to RESULT_FILE and exits; `lag` is the longest
 * this process's own timer was late, which would be the prober's stall, not the service's.
 */
import { START_SIGNAL, STOP_SIGNAL } from "../tests/_harness/measure_signals.ts";

const env = (name: string) =>
  Deno.env.get(name) ?? (() => {
    throw new Error(`${name} is required`);
  })();
const url = env("URL");
const interval = Number(Deno.env.get("INTERVAL_MS") ?? "10");
const maxMs = Number(Deno.env.get("MAX_MS") ?? "120000");

const start = Promise.withResolvers<void>();
const stop = Promise.withResolvers<void>();
Deno.addSignalListener(START_SIGNAL, () => start.resolve());
Deno.addSignalListener(STOP_SIGNAL, () => stop.resolve());
// One connection per probe in flight, reused: what a load balancer's health checker keeps.
const client = Deno.createHttpClient({ poolMaxIdlePerHost: 64 });
await (await fetch(url, { client })).arrayBuffer();
console.log(JSON.stringify({ ready: true }));
await start.promise;

const latencies: number[] = [];
const inflight = new Set<Promise<unknown>>();
let errors = 0;
let lag = 0;
let stopped = false;
stop.promise.then(() => stopped = true);
const t0 = performance.now();
const deadline = setTimeout(() => stop.resolve(), maxMs);

const probe = () => {
  const sent = performance.now();
  const p = fetch(url, { client, signal: AbortSignal.timeout(10_000) })
    .then(async (res) => {
      await res.arrayBuffer();
      if (!res.ok) errors++;
    })
    .catch(() => {
      errors++;
    })
    .finally(() => {
      latencies.push(performance.now() - sent);
      inflight.delete(p);
    });
  inflight.add(p);
};

// Tick k is due at t0 + k * interval: a late timer sends the probe at once and the schedule
// stays anchored, so the interval does not stretch with the service's latency.
for (let k = 0; !stopped; k++) {
  const due = t0 + k * interval;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  if (stopped) break;
  lag = Math.max(lag, performance.now() - due);
  probe();
}
clearTimeout(deadline);
await Promise.all(inflight);
await Deno.writeTextFile(env("RESULT_FILE"), JSON.stringify({ latencies, errors, lag }));
client.close();
Deno.exit(0);
