/**
 * B3's upload load in a process of its own, so that sending twenty 5 MB bodies never stalls the
 * prober's event loop (in one process the prober's own loop stalled for up to 108 ms, and that
 * wait was counted as the service's latency). Environment: BASE, AUTHORIZATION, UPLOADS,
 * RESULT_FILE, SEND (`socket`: every request written to its own socket at once, the burst;
 * `fetch`: Deno's fetch, whose client sends the bodies over several seconds, the old B3).
 * Encodes UPLOADS distinct 12 MP JPEGs (cached after the first run) as forms, prints
 * `{"ready": true}`, waits for START_SIGNAL, sends every upload at once, writes
 * `{"statuses": [...], "ms": n}` to RESULT_FILE and exits.
 */
import { cachedPhotoJpeg } from "./_lib/images.ts";
import { multipartBody } from "../tests/_harness/upload_form.ts";
import { socketUpload, upload } from "./_lib/uploads.ts";
import { withComment } from "../tests/_harness/photos.ts";
import { START_SIGNAL } from "../tests/_harness/measure_signals.ts";

const env = (name: string) =>
  Deno.env.get(name) ?? (() => {
    throw new Error(`${name} is required`);
  })();
const base = env("BASE");
const auth = { authorization: env("AUTHORIZATION") };
const count = Number(env("UPLOADS"));
const send = Deno.env.get("SEND") ?? "socket";
const forms = [];
for (let i = 0; i < count; i++) {
  // Distinct pictures; the comment makes them distinct from any earlier run's on this database.
  const jpeg = await cachedPhotoJpeg(4000, 3000, 100 + i);
  forms.push(multipartBody(withComment(jpeg, `b3-${i}-${Date.now()}`), ["bench"]));
}

const go = Promise.withResolvers<void>();
Deno.addSignalListener(START_SIGNAL, () => go.resolve());
console.log(JSON.stringify({ ready: true }));
await go.promise;

const t0 = performance.now();
const statuses = await Promise.all(forms.map(async (form) => {
  if (send === "socket") return await socketUpload(base, auth, form);
  const res = await upload(base, auth, form);
  await res.arrayBuffer();
  return res.status;
}));
await Deno.writeTextFile(
  env("RESULT_FILE"),
  JSON.stringify({ statuses, ms: performance.now() - t0 }),
);
Deno.exit(0);
