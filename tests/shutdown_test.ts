/**
 * Graceful shutdown of the real entry: `deno task start` (the container's CMD) gets SIGTERM
 * while an upload is half sent; the upload still completes, new connections are turned away at
 * once (refused, or told 503 by health while draining), and the process exits 0 within its bound,
 * after which nothing listens.
 */
import assert from "node:assert/strict";
import sharp from "sharp";
import { originalKey } from "../domain/storage_keys.ts";
import { TEST_PASSWORD } from "./_harness/app.ts";
import { childEnv, type ChildService, ROOT, spawnService } from "./_harness/child.ts";
import { freshDatabase } from "./_harness/db.ts";
import { disposeS3, startS3 } from "./_harness/s3.ts";
import { until } from "./_harness/waits.ts";

/** main.ts waits at most 25 s for in-flight requests; give it a little more to close. */
const EXIT_BOUND_MS = 30_000;

/** The container's CMD is `deno task start`: run exactly that (deno task forwards SIGTERM). */
async function startTask(): Promise<string[]> {
  const { tasks } = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  assert.match(String(tasks.start), /^deno run .* main\.ts$/, tasks.start);
  return ["task", "start"];
}

/** A 3000x2000 PNG of noise: megabytes that do not compress away. */
async function largePng(): Promise<Uint8Array> {
  const raw = new Uint8Array(3000 * 2000 * 3);
  for (let i = 0; i < raw.length; i += 65536) crypto.getRandomValues(raw.subarray(i, i + 65536));
  const png = sharp(raw, { raw: { width: 3000, height: 2000, channels: 3 } }).png({
    compressionLevel: 1,
  });
  return new Uint8Array(await png.toBuffer());
}

async function connectRefused(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.close();
    return false;
  } catch (e) {
    if (e instanceof Deno.errors.ConnectionRefused) return true;
    throw e;
  }
}

/**
 * True when a new connection is turned away: refused, or (a service that drains before it closes
 * its listener) answered with a health status that takes it out of a load balancer's rotation.
 */
async function turnedAway(base: string): Promise<boolean> {
  const client = Deno.createHttpClient({});
  try {
    const res = await fetch(`${base}/api/v1/health`, { client, signal: AbortSignal.timeout(2000) });
    await res.body?.cancel();
    return res.status !== 200;
  } catch (e) {
    if ((e as Error).name === "TimeoutError") return false;
    return true;
  } finally {
    client.close();
  }
}

Deno.test("SIGTERM during an upload: the upload completes, new connections are turned away, exit 0", async () => {
  const db = await freshDatabase();
  const s3 = await startS3();
  let child: ChildService | undefined;
  try {
    const service = child = await spawnService(
      await startTask(),
      childEnv(db, s3, { LOG_LEVEL: "info" }),
    );
    const { base, port } = service;
    const tokenRes = await fetch(`${base}/api/v1/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: TEST_PASSWORD }),
    });
    assert.equal(tokenRes.status, 200);
    const { access_token } = await tokenRes.json();

    // A multipart body sent in two halves, the second only after SIGTERM went out.
    const png = await largePng();
    const boundary = `----shutdown${crypto.randomUUID()}`;
    const enc = new TextEncoder();
    const head = enc.encode(
      `--${boundary}\r\ncontent-disposition: form-data; name="tags"\r\n\r\nshutdown\r\n` +
        `--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="big.png"\r\n` +
        `content-type: image/png\r\n\r\n`,
    );
    const tail = enc.encode(`\r\n--${boundary}--\r\n`);
    const half = Math.floor(png.length / 2);
    let firstHalfSent!: () => void;
    const firstHalf = new Promise<void>((r) => firstHalfSent = r);
    let releaseRest!: () => void;
    const rest = new Promise<void>((r) => releaseRest = r);
    const body = new ReadableStream<Uint8Array>({
      async start(ctl) {
        ctl.enqueue(head);
        for (let i = 0; i < half; i += 256 * 1024) {
          ctl.enqueue(png.slice(i, Math.min(half, i + 256 * 1024)));
        }
        firstHalfSent();
        await rest;
        for (let i = half; i < png.length; i += 256 * 1024) {
          ctl.enqueue(png.slice(i, i + 256 * 1024));
        }
        ctl.enqueue(tail);
        ctl.close();
      },
    });
    const client = Deno.createHttpClient({});
    const uploading = fetch(`${base}/api/v1/images`, {
      method: "POST",
      client,
      headers: {
        authorization: `Bearer ${access_token}`,
        "content-type": `multipart/form-data; boundary=${boundary}`,
      },
      body,
    });
    await firstHalf;
    // Let the first half travel, so that the server is mid-request when the signal lands.
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(service.alive());

    const signalled = performance.now();
    service.kill("SIGTERM");
    await until("the shutdown log line", () => /"shutting down"/.test(service.stdout()), 10_000);
    await until("new connections to be turned away", () => turnedAway(base), 5_000);
    assert.ok(service.alive(), "main.ts waits for the in-flight upload");

    releaseRest();
    const res = await uploading;
    const text = await res.text();
    assert.equal(res.status, 201, text);
    const img = JSON.parse(text);
    assert.equal(img.size_bytes, png.length);
    assert.equal(img.width, 3000);
    client.close();

    const exitBound = new Promise<null>((r) => setTimeout(() => r(null), EXIT_BOUND_MS));
    const code = await Promise.race([service.status, exitBound]);
    assert.ok(code, `main.ts did not exit within ${EXIT_BOUND_MS} ms of SIGTERM`);
    console.log(`exited ${Math.round(performance.now() - signalled)} ms after SIGTERM`);
    assert.equal(code.code, 0, service.stderr());
    assert.ok(await connectRefused(port), "nothing listens after exit");

    // The upload was committed, bytes included.
    const [row] = await db.sql`select size_bytes, short_id from images`;
    assert.equal(Number(row.size_bytes), png.length);
    const stored = await s3.store.head(originalKey(row.short_id));
    assert.equal(stored?.size, png.length);
  } finally {
    await child?.stop(1_000);
    await db.drop();
    await disposeS3(s3);
  }
});
