/**
 * B4 helper: in a fresh process, reads one object from s3rver as fast as possible, either
 * through the service's S3Store (READ_MODE=store) or with fetch() (READ_MODE=fetch),
 * sampling its own RSS every 10 ms. Prints `{"growthMb": n, "bytes": n}`.
 */
import { memoryKb } from "./_lib/machine.ts";
import { s3rverStore } from "../tests/_harness/s3.ts";

const endpoint = Deno.env.get("S3_ENDPOINT")!;
const bucket = Deno.env.get("S3_BUCKET")!;
const key = Deno.env.get("READ_KEY")!;
const store = s3rverStore({ endpoint, bucket });
// Warm both paths on a small request first, so start-up allocations are not counted.
await (await fetch(`${endpoint}/${bucket}`, { method: "HEAD" })).body?.cancel();
await store.head(key);

const before = (await memoryKb(Deno.pid)).rss;
let peak = before;
let sampling = true;
const sampler = (async () => {
  while (sampling) {
    peak = Math.max(peak, (await memoryKb(Deno.pid)).rss);
    await new Promise((r) => setTimeout(r, 10));
  }
})();
const body = Deno.env.get("READ_MODE") === "store"
  ? (await store.get(key))!.body
  : (await fetch(`${endpoint}/${bucket}/${key}`)).body!;
let bytes = 0;
for await (const chunk of body) bytes += chunk.length;
sampling = false;
await sampler;
console.log(JSON.stringify({ growthMb: (peak - before) / 1024, bytes }));
Deno.exit(0);
