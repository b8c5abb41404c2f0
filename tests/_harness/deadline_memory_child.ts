/**
 * The child of adapters/storage/deadline_test.ts's memory test (run with `--expose-gc`): streams
 * CHUNKS chunks of 1 MiB, each filled so that it is resident, through ProgressDeadline's
 * watchResponse and prints `{ bytes, retainedMb }` as JSON, where retainedMb is the most the
 * isolate held (heap and array buffers) after a full collection, taken every 10 chunks, above
 * what it held before. Garbage a collection has not reached yet, and other test files of the same
 * `deno test` process (they share its resident size), are not counted: only what is retained.
 */
import { ProgressDeadline } from "../../adapters/storage/deadline.ts";

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("deadline_memory_child.ts needs --v8-flags=--expose-gc");
/** Two collections: the second finishes the first's sweep of freed array buffers. */
const held = () => {
  gc();
  gc();
  const m = Deno.memoryUsage();
  return m.heapUsed + m.external;
};

const chunks = Number(Deno.env.get("CHUNKS"));
let sent = 0;
const source = new ReadableStream<Uint8Array>({
  pull(ctl) {
    if (sent++ === chunks) ctl.close();
    else ctl.enqueue(new Uint8Array(1024 * 1024).fill(sent));
  },
});
const deadline = new ProgressDeadline(15_000);
const before = held();
let peak = before;
let bytes = 0;
let n = 0;
for await (const part of deadline.watchResponse(source, "get")) {
  bytes += part.length;
  if (++n % 10 === 0) peak = Math.max(peak, held());
}
console.log(JSON.stringify({ bytes, retainedMb: (peak - before) / 1024 / 1024 }));
