import assert from "node:assert/strict";
import sharp from "sharp";
import { sweepPendingDeletes } from "../services/deleter.ts";
import { ingestImage, PUT_SLOTS } from "../services/upload/ingest.ts";
import { UploadState } from "../services/upload/state.ts";
import type { ObjectStore } from "../adapters/storage/mod.ts";
import { ThumbnailPool } from "../adapters/thumbnails/pool.ts";
import { TEST_HANG } from "../adapters/thumbnails/messages.ts";
import type { Thumbnailer } from "../services/deps.ts";
import { createApp } from "../wiring/app.ts";
import { originalKey, thumbnailKey } from "../domain/storage_keys.ts";
import { readAll } from "../adapters/storage/mod.ts";
import { isShortId } from "../domain/short_id.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, randomTag, upload } from "./_harness/images.ts";

const MAX = 300_000;
const pool = await ThumbnailPool.start({ size: 2, maxPixels: 50_000_000 });
const svc = await startService({ thumbnails: pool, env: { MAX_UPLOAD_BYTES: String(MAX) } });
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);
addEventListener("unload", () => {
  pool.close();
});

async function rowCount() {
  return (await svc.db.sql`select count(*)::int as n from images`)[0].n as number;
}

Deno.test("an upload of a new image answers 201 with Location, its fields and both objects", async () => {
  const bytes = await makeImage("png", 1200, 800);
  const tag = randomTag();
  const res = await upload(svc.app, auth, bytes, [`${tag}, Second Tag`]);
  assert.equal(res.status, 201);
  const img = await res.json();
  assert.ok(isShortId(img.short_id), img.short_id);
  assert.equal(res.headers.get("location"), `/api/v1/images/${img.short_id}`);
  assert.equal(img.content_type, "image/png");
  assert.equal(img.size_bytes, bytes.length);
  assert.deepEqual([img.width, img.height], [1200, 800]);
  assert.equal(img.hash, await sha256(bytes));
  assert.equal(img.thumbnail_key, thumbnailKey(img.short_id));
  assert.deepEqual(
    img.tags.map((t: { name: string }) => t.name).sort(),
    [tag, "second_tag"].sort(),
  );
  assert.equal(img.file_url, `/api/v1/images/${img.short_id}/file`);
  assert.equal(img.thumbnail_url, `/api/v1/images/${img.short_id}/thumbnail`);
  assert.equal("id" in img, false, "the internal UUID is never exposed");
  assert.deepEqual(await readAll((await svc.s3.store.get(originalKey(img.short_id)))!.body), bytes);
  const thumb = await readAll((await svc.s3.store.get(img.thumbnail_key))!.body);
  const meta = await sharp(thumb).metadata();
  assert.equal(meta.format, "webp");
  assert.deepEqual([meta.width, meta.height], [400, 267]);
});

Deno.test("the same content again answers 200 with the existing image and adds the tags", async () => {
  const bytes = await makeImage("jpeg");
  const [a, b] = [randomTag(), randomTag()];
  const first = await (await upload(svc.app, auth, bytes, [a])).json();
  const before = await rowCount();
  const objects = async () => (await Array.fromAsync(svc.s3.store.list(""))).sort();
  const objectsBefore = await objects();
  const res = await upload(svc.app, auth, bytes, [b], { name: "other-name.jpg" });
  assert.equal(res.status, 200);
  const again = await res.json();
  assert.equal(again.short_id, first.short_id);
  assert.deepEqual(again.tags.map((t: { name: string }) => t.name).sort(), [a, b].sort());
  assert.equal(await rowCount(), before, "no new row");
  assert.deepEqual(await objects(), objectsBefore, "no second object");
  assert.ok(objectsBefore.includes(originalKey(first.short_id)));
});

Deno.test("fifty simultaneous uploads of the same new bytes make one row and one object", async () => {
  const bytes = await makeImage("png", 300, 300);
  const hash = await sha256(bytes);
  const objectsBefore = (await Array.fromAsync(svc.s3.store.list("images/"))).length;
  const answers = await Promise.all(
    Array.from({ length: 50 }, () => upload(svc.app, auth, bytes, [randomTag("race")])),
  );
  const statuses = answers.map((r) => r.status).sort();
  const bodies = await Promise.all(answers.map((r) => r.json()));
  assert.equal(statuses.filter((s) => s === 201).length, 1, String(statuses));
  assert.equal(statuses.filter((s) => s === 200).length, 49);
  assert.equal(new Set(bodies.map((b) => b.short_id)).size, 1, "all answers carry one short ID");
  const rows = await svc.db.sql`select short_id from images where hash = ${hash}`;
  assert.equal(rows.length, 1);
  const objectsAfter = (await Array.fromAsync(svc.s3.store.list("images/"))).length;
  assert.equal(objectsAfter, objectsBefore + 1, "one new object");
  const [tagged] = await svc.db.sql`select count(*)::int as n from image_tags it
    join images i on i.id = it.image_id where i.hash = ${hash}`;
  assert.equal(tagged.n, 50, "every request's tag was added");
});

Deno.test("uploads that are not images are refused with 415 whatever they claim", async () => {
  const cases: [string, Uint8Array, string, string][] = [
    ["text", te("just some text, not an image"), "cat.jpg", "image/jpeg"],
    [
      "svg",
      te(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`),
      "x.svg",
      "image/svg+xml",
    ],
    [
      "html",
      te("<!doctype html><html><body><script>alert(1)</script></body></html>"),
      "x.png",
      "image/png",
    ],
    ["zero bytes", new Uint8Array(0), "empty.png", "image/png"],
  ];
  const before = await rowCount();
  for (const [name, bytes, file, type] of cases) {
    const res = await upload(svc.app, auth, bytes, [], { name: file, type });
    assert.equal(res.status, 415, name);
    const body = await res.json();
    assert.equal(body.code, "unsupported_image", name);
    assert.match(body.detail, /not a JPEG, PNG, GIF, WebP or AVIF/);
  }
  assert.equal(await rowCount(), before);
});

Deno.test("a file one byte over MAX_UPLOAD_BYTES is 413 with the limit at the top level", async () => {
  const res = await upload(svc.app, auth, new Uint8Array(MAX + 1), []);
  assert.equal(res.status, 413);
  const body = await res.json();
  assert.equal(body.code, "upload_too_large");
  assert.equal(body.max_bytes, MAX);
  assert.equal(typeof body.detail, "string", "the limit is not nested under detail");
});

Deno.test("a Content-Length over the limit is refused before the body is read", async () => {
  let pulled = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(ctl) {
      pulled++;
      ctl.enqueue(new Uint8Array(64 * 1024));
      if (pulled > 1000) ctl.close();
    },
  });
  const res = await svc.app.request("/api/v1/images", {
    method: "POST",
    headers: {
      ...auth,
      "content-type": "multipart/form-data; boundary=x",
      "content-length": "999999999",
    },
    body,
    duplex: "half",
  } as RequestInit);
  assert.equal(res.status, 413);
  assert.ok(pulled <= 2, `read ${pulled} chunks`);
});

Deno.test("a body streamed past the limit without Content-Length is cut off with 413", async () => {
  let pulled = 0;
  const chunk = new TextEncoder().encode(
    '--x\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\n',
  );
  const body = new ReadableStream<Uint8Array>({
    pull(ctl) {
      ctl.enqueue(pulled++ === 0 ? chunk : new Uint8Array(64 * 1024));
      if (pulled > 2000) ctl.close(); // 128 MB if nothing stopped it
    },
  });
  const res = await svc.app.request("/api/v1/images", {
    method: "POST",
    headers: { ...auth, "content-type": "multipart/form-data; boundary=x" },
    body,
    duplex: "half",
  } as RequestInit);
  assert.equal(res.status, 413);
  assert.ok(pulled < 20, `read ${pulled} chunks of 64 KiB before stopping`);
});

Deno.test("a header-only pixel bomb is refused with 422 before anything decodes it", async () => {
  // A 35-byte GIF claiming 30000x30000.
  const gif = new Uint8Array([
    0x47,
    0x49,
    0x46,
    0x38,
    0x39,
    0x61,
    0x30,
    0x75,
    0x30,
    0x75,
    0x80,
    0,
    0,
    0,
    0,
    0,
    0xff,
    0xff,
    0xff,
    0x2c,
    0,
    0,
    0,
    0,
    0x30,
    0x75,
    0x30,
    0x75,
    0,
    0x02,
    0x02,
    0x44,
    0x01,
    0,
    0x3b,
  ]);
  const res = await upload(svc.app, auth, gif, [], { name: "bomb.gif", type: "image/gif" });
  assert.equal(res.status, 422);
  const body = await res.json();
  assert.equal(body.code, "too_many_pixels");
  assert.equal(body.max_pixels, 50_000_000);
});

Deno.test("truncated JPEG and PNG upload without a thumbnail; the thumbnail route serves the original", async () => {
  for (const format of ["jpeg", "png"] as const) {
    const whole = await makeImage(format, 800, 600);
    const bytes = whole.slice(0, Math.floor(whole.length / 2));
    const res = await upload(svc.app, auth, bytes);
    assert.equal(res.status, 201, format);
    const img = await res.json();
    assert.equal(img.thumbnail_key, null, format);
    const thumb = await svc.app.request(img.thumbnail_url);
    assert.equal(thumb.status, 200);
    assert.equal(thumb.headers.get("content-type"), `image/${format}`);
    assert.deepEqual(new Uint8Array(await thumb.arrayBuffer()), bytes);
  }
});

Deno.test("a multipart body without `file` is 422 and a non-multipart body is 400", async () => {
  const form = new FormData();
  form.append("tags", "cat");
  const noFile = await svc.app.request("/api/v1/images", {
    method: "POST",
    headers: auth,
    body: form,
  });
  assert.equal(noFile.status, 422);
  assert.match((await noFile.json()).detail, /file/);
  const json = await svc.app.request("/api/v1/images", {
    method: "POST",
    headers: { ...auth, "content-type": "application/json" },
    body: JSON.stringify({ file: "x" }),
  });
  assert.equal(json.status, 400);
  assert.match((await json.json()).detail, /multipart/);
});

Deno.test("invalid tag names on upload are 422 and nothing is stored", async () => {
  const before = await rowCount();
  const res = await upload(svc.app, auth, await makeImage(), ["x".repeat(65)]);
  assert.equal(res.status, 422);
  assert.match((await res.json()).detail, /tags/);
  assert.equal(await rowCount(), before);
});

Deno.test("storage down during an upload answers 503, writes no row, and leaves its keys to the sweeper", async () => {
  const before = await rowCount();
  await svc.s3.stop();
  try {
    const res = await upload(svc.app, auth, await makeImage());
    assert.equal(res.status, 503);
    const body = await res.json();
    assert.equal(JSON.stringify(body).includes("127.0.0.1"), false, "no storage detail leaks");
  } finally {
    await svc.s3.restart();
  }
  assert.equal(await rowCount(), before);
  // A failed put may still land (one that timed out), so its keys stay recorded, guarded.
  const kept = await svc.db.sql<{ key: string }[]>`select key from pending_deletes
    where next_attempt_at > now() + interval '50 minutes' order by key`;
  assert.equal(kept.length, 2);
  assert.match(kept[0].key, /^images\//);
  assert.match(kept[1].key, /^thumbnails\/.*\.webp$/);
  await sweepAllPending();
});

/** Lets every pending delete's guard pass and sweeps, as the service would an hour later. */
async function sweepAllPending() {
  await svc.db.sql`update pending_deletes set next_attempt_at = now()`;
  await sweepPendingDeletes(svc.db.sql, svc.s3.store);
}

Deno.test("a database failure after storing removes the stored objects", async () => {
  const objectsBefore = (await Array.fromAsync(svc.s3.store.list(""))).length;
  // Make the insert fail: a check constraint no image can satisfy, just for this test.
  await svc.db.sql`alter table images add constraint test_reject check (size_bytes < 0) not valid`;
  try {
    const res = await upload(svc.app, auth, await makeImage());
    assert.equal(res.status, 500);
  } finally {
    await svc.db.sql`alter table images drop constraint test_reject`;
  }
  const objectsAfter = (await Array.fromAsync(svc.s3.store.list(""))).length;
  assert.equal(objectsAfter, objectsBefore, "no object without its row");
  const pending = await svc.db.sql`select count(*)::int as n from pending_deletes`;
  assert.equal(pending[0].n, 0);
});

/** The test service's store, with its thumbnail puts replaced by `putThumbnail`. */
function withThumbnailPut(
  putThumbnail: (put: () => Promise<void>) => Promise<void>,
): ObjectStore {
  const real = svc.s3.store;
  const store = Object.create(real) as ObjectStore;
  store.put = (key, body, opts) =>
    key.startsWith("thumbnails/")
      ? putThumbnail(() => real.put(key, body, opts))
      : real.put(key, body, opts);
  return store;
}

Deno.test("a burst of uploads writes at most PUT_SLOTS originals to storage at once", async () => {
  const real = svc.s3.store;
  const store = Object.create(real) as ObjectStore;
  let writing = 0, most = 0;
  store.put = async (key, body, opts) => {
    if (!key.startsWith("images/")) return await real.put(key, body, opts);
    most = Math.max(most, ++writing);
    try {
      await new Promise((r) => setTimeout(r, 40)); // a put that takes a while, as 5 MB do
      return await real.put(key, body, opts);
    } finally {
      writing--;
    }
  };
  const images = await Promise.all(Array.from({ length: PUT_SLOTS * 3 }, () => makeImage()));
  // The slots' own wait bound (PUT_SLOT_WAIT_MS) lets an upload go ahead once a loaded machine
  // has kept it waiting that long, which once made 7 writes at once: here no wait gives up short
  // of what the test takes, so every write at once is one the slots let through.
  const uploads = new UploadState(60_000);
  const results = await Promise.all(
    images.map((bytes) => ingestImage({ ...svc.services, store, uploads }, bytes, [randomTag()])),
  );
  assert.ok(results.every((r) => r.created));
  assert.equal(most, PUT_SLOTS);
  for (const { image } of results) assert.ok(await real.head(originalKey(image.short_id)));
});

Deno.test("a thumbnail whose put fails leaves the image without one, and the sweeper removes it if it landed", async () => {
  // The put lands, but its answer never comes: the upload cannot know the object is there.
  const store = withThumbnailPut(async (put) => {
    await put();
    throw new Error("no answer in time");
  });
  const { created, image } = await ingestImage(
    { ...svc.services, store },
    await makeImage(),
    [randomTag()],
  );
  assert.ok(created);
  assert.equal(image.thumbnail_key, null);
  assert.ok(svc.logs.some((l) => /thumbnail not stored/.test(l)));
  // The row owns its original; the thumbnail's key stays recorded for the sweeper.
  const pending = await svc.db.sql<{ key: string }[]>`select key from pending_deletes`;
  assert.deepEqual(pending.map((r) => r.key), [thumbnailKey(image.short_id)]);
  assert.ok(await svc.s3.store.head(thumbnailKey(image.short_id)), "the put landed");
  await sweepAllPending();
  assert.equal(await svc.s3.store.head(thumbnailKey(image.short_id)), null, "no orphan");
  assert.ok(await svc.s3.store.head(originalKey(image.short_id)), "the original stays");
  assert.deepEqual([...await svc.db.sql`select key from pending_deletes`], []);
});

Deno.test("no transaction (and none of its locks) stays open while the thumbnail is stored", async () => {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  let putStarted = false;
  const store = withThumbnailPut(async (put) => {
    putStarted = true;
    await released;
    await put();
  });
  const ingest = ingestImage({ ...svc.services, store }, await makeImage(), [randomTag()]);
  try {
    while (!putStarted) await new Promise((r) => setTimeout(r, 5));
    await new Promise((r) => setTimeout(r, 50));
    const [{ n }] = await svc.db.sql`select count(*)::int as n from pg_stat_activity
      where datname = current_database() and state like 'idle in transaction%'`;
    assert.equal(n, 0, "a slow thumbnail put must not keep a transaction (and its locks) open");
  } finally {
    release();
  }
  const { created, image } = await ingest;
  assert.ok(created);
  assert.equal(image.thumbnail_key, thumbnailKey(image.short_id));
});

function te(s: string) {
  return new TextEncoder().encode(s);
}

async function sha256(bytes: Uint8Array) {
  const d = new Uint8Array(await crypto.subtle.digest("SHA-256", bytes as BufferSource));
  return [...d].map((b) => b.toString(16).padStart(2, "0")).join("");
}

Deno.test("a duplicate upload drops its queued thumbnail job: it answers while the one worker is busy", async () => {
  using one = await ThumbnailPool.start({
    size: 1,
    maxPixels: 50_000_000,
    timeoutMs: 120_000,
    testHooks: true,
  });
  const outcomes: string[] = [];
  const thumbnails: Thumbnailer = {
    thumbnail: (input, signal) => {
      const job = one.thumbnail(input, signal);
      job.then(() => outcomes.push("made"), (e) => outcomes.push(String(e?.message ?? e)));
      return job;
    },
  };
  const app = createApp({ ...svc.services, thumbnails });
  const bytes = await makeImage("png", 300, 200);
  const first = await upload(app, auth, bytes, [randomTag()]);
  assert.equal(first.status, 201);
  await first.body?.cancel();
  assert.deepEqual(outcomes, ["made"]);
  // The only worker is taken by a job that never ends by itself: the next job has to queue.
  const blocker = one.thumbnail(new TextEncoder().encode(TEST_HANG));
  blocker.catch(() => {});
  assert.deepEqual(one.stats(), { workers: 1, busy: 1, queued: 0 });
  const again = await upload(app, auth, bytes, [randomTag()]);
  assert.equal(again.status, 200, "the same content: the existing image");
  await again.body?.cancel();
  assert.deepEqual(one.stats(), { workers: 1, busy: 1, queued: 0 }, "its job left the queue");
  assert.deepEqual(outcomes, ["made", "the upload no longer needs this thumbnail"]);
});

Deno.test("a file of exactly MAX_UPLOAD_BYTES is accepted", async () => {
  // A PNG padded after its end to the limit: readers stop at IEND.
  const png = await makeImage("png", 16, 16);
  const bytes = new Uint8Array(MAX);
  bytes.set(png);
  const res = await upload(svc.app, auth, bytes, []);
  assert.equal(res.status, 201, await res.clone().text());
  assert.equal((await res.json()).size_bytes, MAX);
});
