/**
 * B3's upload load in a process of its own, so that sending twenty 5 MB bodies never stalls the
 * prober's event loop (in one process the prober's own loop stalled for up to 108 ms, and that
 * wait was counted as the service's latency). Environment: BASE, AUTHORIZATION, UPLOADS,
 * RESULT_FILE. Makes distinct 12 MP JPEGs, prints `{"ready": true}`, waits for SIGUSR1, sends
 * every upload at once, writes `{"statuses": [...], "ms": n}` to RESULT_FILE and exits.
 */
import { photoJpeg, upload, withComment } from "./_lib.ts";

const env = (name: string) =>
  Deno.env.get(name) ?? (() => {
    throw new Error(`${name} is required`);
  })();
const base = env("BASE");
const auth = { authorization: env("AUTHORIZATION") };
const count = Number(env("UPLOADS"));
const jpeg = await photoJpeg(4000, 3000, 3);
const bodies = Array.from({ length: count }, (_, i) => withComment(jpeg, `b3-${i}-${Date.now()}`));

const go = Promise.withResolvers<void>();
Deno.addSignalListener("SIGUSR1", () => go.resolve());
console.log(JSON.stringify({ ready: true }));
await go.promise;

const t0 = performance.now();
const statuses = await Promise.all(bodies.map(async (b) => {
  const res = await upload(base, auth, b);
  await res.arrayBuffer();
  return res.status;
}));
await Deno.writeTextFile(
  env("RESULT_FILE"),
  JSON.stringify({ statuses, ms: performance.now() - t0 }),
);
Deno.exit(0);
