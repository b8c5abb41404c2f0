import assert from "node:assert/strict";
import { join } from "node:path";
import {
  answerDeadlineMs,
  BoardApiError,
  BoardClient,
  DEFAULT_RETRY,
  retryAfterMs,
} from "./client.ts";
import { pathInside, runExport } from "./export.ts";
import { runRestore } from "./restore.ts";
import { sha256Hex } from "../../domain/hash.ts";
import { forEachConcurrent } from "./concurrent.ts";
import { readLines, readLinesBackward } from "./lines.ts";
import { parseManifestLine } from "./manifest.ts";
import { MAX_LISTED, Progress, type ProgressSink, renderBar } from "./progress.ts";
import { readCandidate, sidecarOf, sidecarTags, walkFolder } from "./walk.ts";
import { SNIFF_BYTES } from "../../domain/image_sniff.ts";

/** A fixture server answering each request with the next of `answers` (the last one repeats). */
function fixture(answers: (() => Response)[]) {
  let n = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    await req.body?.cancel();
    return answers[Math.min(n++, answers.length - 1)]();
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests: () => n,
    close: () => server.shutdown(),
  };
}

Deno.test("BoardClient retries 503 and 429, honouring Retry-After, then succeeds", async () => {
  const srv = fixture([
    () => new Response("{}", { status: 503, headers: { "retry-after": "3" } }),
    () => new Response("{}", { status: 429, headers: { "retry-after": "7" } }),
    () => new Response("{}", { status: 503 }),
    () => Response.json({ ok: true }),
  ]);
  const waits: number[] = [];
  try {
    const client = new BoardClient({
      url: srv.url,
      sleep: (ms) => (waits.push(ms), Promise.resolve()),
      retry: { baseMs: 400 },
    });
    const body = await client.json<{ ok: boolean }>("/api/v1/x");
    assert.deepEqual(body, { ok: true });
    assert.equal(srv.requests(), 4);
    assert.deepEqual(waits.slice(0, 2), [3000, 7000]);
    // Without Retry-After: exponential back-off with jitter (third retry: 400 * 2^2, halved at most).
    assert.ok(waits[2] >= 800 && waits[2] <= 1600, String(waits[2]));
  } finally {
    await srv.close();
  }
});

Deno.test("BoardClient's waits are capped and its attempts bounded; 4xx is not retried", async () => {
  const srv = fixture([
    () => new Response("{}", { status: 503, headers: { "retry-after": "86400" } }),
  ]);
  const waits: number[] = [];
  try {
    const client = new BoardClient({
      url: srv.url,
      sleep: (ms) => (waits.push(ms), Promise.resolve()),
      retry: { attempts: 3, maxWaitMs: 60_000 },
    });
    await assert.rejects(
      client.request("/x"),
      (e) => e instanceof BoardApiError && e.status === 503,
    );
    assert.equal(srv.requests(), 3);
    assert.deepEqual(waits, [60_000, 60_000]);
  } finally {
    await srv.close();
  }
  const bad = fixture([
    () => Response.json({ code: "short_id_taken", detail: "Taken" }, { status: 409 }),
  ]);
  try {
    const client = new BoardClient({ url: bad.url, sleep: () => Promise.resolve() });
    await assert.rejects(
      client.request("/x"),
      (e) =>
        e instanceof BoardApiError && e.code === "short_id_taken" &&
        e.message === "Taken (HTTP 409)",
    );
    assert.equal(bad.requests(), 1);
  } finally {
    await bad.close();
  }
});

Deno.test("BoardClient signs in again once when its token is refused mid-run", async () => {
  let logins = 0;
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    if (new URL(req.url).pathname === "/api/v1/auth/token") {
      const body = await req.json();
      assert.deepEqual(body, { username: "admin", password: "pw" });
      return Response.json({ access_token: `token${++logins}` });
    }
    const ok = req.headers.get("authorization") === `Bearer token${logins}` && logins === 2;
    return ok ? Response.json({ ok: true }) : Response.json({ detail: "expired" }, { status: 401 });
  });
  try {
    const client = new BoardClient({
      url: `http://127.0.0.1:${server.addr.port}`,
      credentials: { username: "admin", password: "pw" },
    });
    await client.login();
    assert.deepEqual(await client.json("/api/v1/x"), { ok: true });
    assert.equal(logins, 2);
  } finally {
    await server.shutdown();
  }
});

Deno.test("a download may take longer than the deadline while it progresses, not while it stalls", async () => {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const stall = new URL(req.url).pathname === "/stall";
    let n = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (stall && n === 1) {
          // No other byte for 10 s, ten times the deadline; then the body ends, so that the
          // server's shutdown cannot wait forever should the client's cancel not reach it.
          await new Promise((r) => timer = setTimeout(r, 10_000));
          return controller.close();
        }
        if (n++ === 30) return controller.close();
        await new Promise((r) => timer = setTimeout(r, 50));
        controller.enqueue(new Uint8Array(10));
      },
      cancel: () => clearTimeout(timer),
    });
    return new Response(body);
  });
  try {
    const client = new BoardClient({
      url: `http://127.0.0.1:${server.addr.port}`,
      retry: { timeoutMs: 1000 },
    });
    // 30 pieces 50 ms apart: 1.5 s in all, past the 1 s deadline, each piece well within it.
    const slow = await (await client.request("/slow")).arrayBuffer();
    assert.equal(slow.byteLength, 300);
    const stalled = await client.request("/stall");
    await assert.rejects(stalled.arrayBuffer());
  } finally {
    await server.shutdown();
  }
});

Deno.test("an upload's deadline grows with its body: 16 KB/s on top of the 2 minutes", () => {
  assert.equal(answerDeadlineMs(DEFAULT_RETRY, 0), 120_000);
  assert.equal(answerDeadlineMs(DEFAULT_RETRY, 20 * 1_000_000), 120_000 + 1_250_000);
});

Deno.test("retryAfterMs reads seconds and HTTP dates", () => {
  assert.equal(retryAfterMs("5"), 5000);
  const now = Date.parse("2026-11-24T00:00:00Z");
  assert.equal(retryAfterMs("Tue, 24 Nov 2026 00:00:10 GMT", now), 10_000);
  assert.equal(retryAfterMs("soon"), null);
  assert.equal(retryAfterMs(null), null);
});

/** A sink that records what it is given. */
function recorder(tty: boolean) {
  const lines: string[] = [];
  const bars: string[] = [];
  const sink: ProgressSink = { tty, out: (l) => lines.push(l), bar: (b) => bars.push(b) };
  return { sink, lines, bars };
}

Deno.test("off a terminal: a line per file, a progress line per tenth, a summary with paths", () => {
  const { sink, lines, bars } = recorder(false);
  const p = new Progress(sink, "files", 0);
  p.setTotals(20, 2000);
  for (let i = 0; i < 20; i++) {
    p.record(i === 3 ? "failed" : "created", `f${i}`, `created f${i}`, 100, { failed: i === 3 });
  }
  assert.equal(bars.length, 0);
  assert.equal(lines.filter((l) => l.startsWith("created ")).length, 20);
  const progress = lines.filter((l) => l.startsWith("progress "));
  assert.equal(progress.length, 10);
  assert.match(
    progress[0],
    // The rate and ETA are the machine's: a loaded one reads "0.2 files/s · ETA 1m46s".
    /^progress 2\/20 files · 200 B\/2\.0 kB · [\d.]+ files\/s · ETA (\d+h\d\dm|(\d+m)?\d+s) · 0 failed$/,
  );
  assert.match(progress.at(-1)!, /^progress 20\/20 files · 2\.0 kB\/2\.0 kB · .* · 1 failed$/);
  const summary = p.summary([["created", "created"], ["failed", "failed"]]);
  assert.match(summary[0], /^Summary: 19 created, 1 failed in /);
  assert.deepEqual(summary.slice(-2), ["failed (1):", "  f3"]);
});

Deno.test("on a terminal: a bar, and only loud lines printed; the summary caps its lists", () => {
  const { sink, lines, bars } = recorder(true);
  const p = new Progress(sink, "files", 0);
  p.setTotals(MAX_LISTED + 5, 0);
  for (let i = 0; i < MAX_LISTED + 5; i++) p.record("created", `f${i}`, `created f${i}`, 0);
  p.record("failed", "bad", "failed bad: reason", 0, { loud: true, failed: true });
  assert.deepEqual(lines, ["failed bad: reason"]);
  assert.ok(bars.length >= 1);
  const summary = p.summary([["created", "created"]]);
  assert.equal(summary.at(-1), "  ... and 5 more");
  assert.equal(summary.length, 1 + 1 + MAX_LISTED + 1);
});

Deno.test("renderBar shows the fraction, the figures and the ETA, fitted to the terminal", () => {
  const state = {
    files: 100,
    bytes: 10_000_000,
    doneFiles: 25,
    doneBytes: 2_500_000,
    failed: 2,
    startedMs: 0,
  };
  const figures = "25/100 files · 2.5 MB/10 MB · 2.5 files/s · ETA 30s · 2 failed";
  assert.equal(
    renderBar(state, 10_000, figures.length + 29),
    `[#####---------------]  25% ${figures}`,
  );
  const wide = renderBar(state, 10_000, 200);
  assert.ok(wide.startsWith(`[${"#".repeat(8)}${"-".repeat(22)}]  25% `), wide);
  assert.ok(renderBar(state, 10_000, 100).length < 100);
});

Deno.test("readLinesBackward gives the lines last to first across blocks and UTF-8 characters", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const lines = Array.from({ length: 400 }, (_, i) => `${i} ${"é😀x".repeat(100 + (i % 50))}`);
    const path = join(dir, "m.jsonl");
    await Deno.writeTextFile(path, lines.join("\n") + "\n\n");
    const back: string[] = [];
    for await (const l of readLinesBackward(path)) back.push(l);
    assert.deepEqual(back, [...lines].reverse());
    const fwd: string[] = [];
    for await (const l of readLines(path)) fwd.push(l);
    assert.deepEqual(fwd, lines);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("sidecars: x.gif.txt before x.txt; tags split at commas and newlines", async () => {
  assert.equal(sidecarOf("x.gif", new Set(["x.gif", "x.gif.txt", "x.txt"])), "x.gif.txt");
  assert.equal(sidecarOf("x.gif", new Set(["x.gif", "x.txt"])), "x.txt");
  assert.equal(sidecarOf("x.gif", new Set(["x.gif"])), null);
  assert.deepEqual(sidecarTags("a, b\r\nc\n\n, d e"), ["a", "b", "c", "d e"]);
  const dir = await Deno.makeTempDir();
  try {
    for (const f of ["b/x.png", "b/x.txt", "a.png", "a.png.txt", "lone.txt", "b/c/y.gif"]) {
      await Deno.mkdir(join(dir, f, ".."), { recursive: true });
      await Deno.writeTextFile(join(dir, f), "");
    }
    const seen: string[] = [];
    for await (const e of walkFolder(dir)) {
      seen.push(
        e.kind === "file" ? `${e.rel} [${e.folders}] ${e.sidecar ? "+sidecar" : ""}` : e.rel,
      );
    }
    assert.deepEqual(seen, [
      "a.png [] +sidecar",
      "lone.txt [] ",
      "b/x.png [b] +sidecar",
      "b/c/y.gif [b,c] ",
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("forEachConcurrent keeps at most `concurrency` items in flight and pulls lazily", async () => {
  let pulled = 0;
  async function* items() {
    for (let i = 0; i < 50; i++) {
      pulled++;
      yield i;
    }
  }
  let inFlight = 0;
  let most = 0;
  let maxAhead = 0;
  let done = 0;
  await forEachConcurrent(items(), 3, async () => {
    inFlight++;
    most = Math.max(most, inFlight);
    maxAhead = Math.max(maxAhead, pulled - done);
    await new Promise((r) => setTimeout(r, 1));
    inFlight--;
    done++;
  });
  assert.equal(done, 50);
  assert.equal(most, 3);
  assert.ok(maxAhead <= 3, String(maxAhead));
});

const ascii = (text: string) => [...new TextEncoder().encode(text)];

Deno.test("readCandidate reads only the head of a non-image, and all of a JPEG with a long header", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const other = join(dir, "video.mp4");
    await Deno.writeFile(other, new Uint8Array(2 * SNIFF_BYTES).fill(7));
    const skipped = await readCandidate(other, 32 * 1024 * 1024);
    assert.equal(skipped.sniffed, null);
    assert.equal(skipped.bytes, undefined, "a non-image is not read whole");
    assert.equal(skipped.size, 2 * SNIFF_BYTES);

    // SOI, ten 64 KB comment segments (640 KB of header), then a baseline SOF0 of 30x20.
    const parts: number[][] = [[0xff, 0xd8]];
    for (let i = 0; i < 10; i++) {
      const len = 65_000;
      parts.push([0xff, 0xfe, len >> 8, len & 0xff, ...new Array(len - 2).fill(0x41)]);
    }
    parts.push([0xff, 0xc0, 0, 11, 8, 0, 20, 0, 30, 1, 1, 0x11, 0]);
    const jpeg = join(dir, "long.jpg");
    await Deno.writeFile(jpeg, new Uint8Array(parts.flat()));
    const read = await readCandidate(jpeg, 32 * 1024 * 1024);
    assert.deepEqual(read.sniffed, { type: "image/jpeg", width: 30, height: 20 });
    assert.equal(read.bytes?.length, read.size);

    // An MP4 and a WebM longer than the head: recognised from it, then read whole (issue 45).
    const hex = (h: string) => h.match(/../g)!.map((b) => parseInt(b, 16));
    const videos: [string, number[], string][] = [
      ["clip.mp4", [...hex("00000010"), ...ascii("ftypisom"), ...hex("00000200")], "video/mp4"],
      // An EBML header whose DocType (0x4282) is "webm", then a Segment of unknown size.
      [
        "clip.webm",
        [...hex("1a45dfa3874282"), 0x84, ...ascii("webm"), ...hex("1853806701ffffffffffffff")],
        "video/webm",
      ],
    ];
    for (const [name, head, type] of videos) {
      const path = join(dir, name);
      const bytes = new Uint8Array(2 * SNIFF_BYTES);
      bytes.set(head);
      await Deno.writeFile(path, bytes);
      const video = await readCandidate(path, 32 * 1024 * 1024);
      assert.deepEqual(video.sniffed, { type }, name);
      assert.equal(video.bytes?.length, 2 * SNIFF_BYTES, name);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an export leaves out an image deleted after it was listed, and is not a failure", async () => {
  const bytes = new TextEncoder().encode("original bytes");
  const image = (id: string, hash: string) => ({
    short_id: id,
    hash,
    content_type: "image/png",
    size_bytes: bytes.length,
    width: 1,
    height: 1,
    thumbnail_key: null,
    tags: [{ name: "t", image_count: 1 }],
    file_url: `/api/v1/images/${id}/file`,
    thumbnail_url: `/api/v1/images/${id}/file`,
    created_at: "2026-01-01T00:00:00.000Z",
  });
  const items = [image("AAAAAAAA", sha256Hex(bytes)), image("BBBBBBBB", sha256Hex(bytes))];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/api/v1/images") return Response.json({ items, next_cursor: null });
    if (path === "/api/v1/images/AAAAAAAA/file") return new Response(bytes);
    return Response.json({ detail: "Image not found" }, { status: 404 });
  });
  const dir = await Deno.makeTempDir();
  try {
    const { sink, lines } = recorder(false);
    const client = new BoardClient({ url: `http://127.0.0.1:${server.addr.port}` });
    const progress = await runExport({ folder: dir, client, concurrency: 2, sink });
    assert.equal(progress.count("downloaded"), 1);
    assert.equal(progress.count("gone"), 1);
    assert.equal(progress.count("failed"), 0);
    assert.ok(lines.includes("gone images/BBBBBBBB.png (BBBBBBBB)"), lines.join("\n"));
    const manifest = (await Deno.readTextFile(join(dir, "manifest.jsonl"))).trim().split("\n");
    assert.deepEqual(manifest.map((l) => JSON.parse(l).short_id), ["AAAAAAAA"]);
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("pathInside keeps an export's files inside its folder", () => {
  assert.equal(pathInside("/x/export", "images/AAAAAAAA.png"), "/x/export/images/AAAAAAAA.png");
  assert.equal(pathInside("/x/export/", "images/a/../b.png"), "/x/export/images/b.png");
  for (
    const rel of ["images/../../evil.bin", "../export-other/a", "/etc/passwd", "images/../..", ""]
  ) {
    assert.throws(() => pathInside("/x/export", rel), /is not inside the export folder/, rel);
  }
});

Deno.test("parseManifestLine refuses a content_type that is not one of ours", () => {
  const line = (content_type: unknown) =>
    JSON.stringify({
      short_id: "AAAAAAAA",
      hash: "a".repeat(64),
      content_type,
      created_at: "2026-01-01T00:00:00.000Z",
      tags: [],
      file: "images/AAAAAAAA.png",
    });
  assert.equal(parseManifestLine(line("image/png")).content_type, "image/png");
  for (const bad of ["image/png\r\nX-Injected: 1", "text/html", "constructor", 7, undefined]) {
    assert.throws(() => parseManifestLine(line(bad)), /not a manifest line/, String(bad));
  }
});

/** An image of the fixture boards below: `bytes` under short ID `id`. */
function fixtureImage(id: string, bytes: Uint8Array) {
  return {
    short_id: id,
    hash: sha256Hex(bytes),
    content_type: "image/png",
    size_bytes: bytes.length,
    width: 1,
    height: 1,
    thumbnail_key: null,
    tags: [{ name: "t", image_count: 1 }],
    file_url: `/api/v1/images/${id}/file`,
    thumbnail_url: `/api/v1/images/${id}/file`,
    created_at: "2026-01-01T00:00:00.000Z",
  };
}

Deno.test("an export resumed over a damaged file of the right size downloads it again", async () => {
  const good = new TextEncoder().encode("the intact original");
  const damaged = new TextEncoder().encode("the damaged original");
  const items = [fixtureImage("AAAAAAAA", good), fixtureImage("BBBBBBBB", damaged)];
  const fetched: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/api/v1/images") return Response.json({ items, next_cursor: null });
    fetched.push(path);
    if (path === "/api/v1/images/AAAAAAAA/file") return new Response(good);
    if (path === "/api/v1/images/BBBBBBBB/file") return new Response(damaged);
    return Response.json({ detail: "Image not found" }, { status: 404 });
  });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "images"));
    await Deno.writeFile(join(dir, "images/AAAAAAAA.png"), good);
    // One byte changed: the same size, another hash.
    const bad = damaged.slice();
    bad[0] ^= 0xff;
    await Deno.writeFile(join(dir, "images/BBBBBBBB.png"), bad);
    const { sink, lines } = recorder(false);
    const client = new BoardClient({ url: `http://127.0.0.1:${server.addr.port}` });
    const progress = await runExport({ folder: dir, client, concurrency: 1, sink });
    assert.deepEqual(
      [progress.count("kept"), progress.count("downloaded")],
      [1, 1],
      lines.join("\n"),
    );
    assert.deepEqual(fetched, ["/api/v1/images/BBBBBBBB/file"]);
    assert.deepEqual(await Deno.readFile(join(dir, "images/BBBBBBBB.png")), damaged);
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a restore refuses a file that does not match the manifest's hash and sends nothing of it", async () => {
  const kept = new TextEncoder().encode("an original as exported");
  const tampered = new TextEncoder().encode("an original as exported, then changed");
  const uploads: string[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const form = await req.formData();
    const id = String(form.get("short_id"));
    uploads.push(id);
    const file = form.get("file") as File;
    return Response.json(fixtureImage(id, new Uint8Array(await file.arrayBuffer())), {
      status: 201,
    });
  });
  const dir = await Deno.makeTempDir();
  try {
    await Deno.mkdir(join(dir, "images"));
    // Both lines give the kept original's hash; B's file was changed after the export.
    const line = (id: string, bytes: Uint8Array) =>
      JSON.stringify({
        short_id: id,
        hash: sha256Hex(bytes),
        content_type: "image/png",
        size_bytes: bytes.length,
        width: 1,
        height: 1,
        tags: ["t"],
        created_at: "2026-01-01T00:00:00.000Z",
        file: `images/${id}.png`,
      });
    await Deno.writeTextFile(
      join(dir, "manifest.jsonl"),
      `${line("AAAAAAAA", kept)}\n${line("BBBBBBBB", kept)}\n`,
    );
    await Deno.writeFile(join(dir, "images/AAAAAAAA.png"), kept);
    await Deno.writeFile(join(dir, "images/BBBBBBBB.png"), tampered);
    const { sink, lines } = recorder(false);
    const client = new BoardClient({ url: `http://127.0.0.1:${server.addr.port}` });
    const progress = await runRestore({ folder: dir, client, concurrency: 1, sink });
    assert.deepEqual([progress.count("created"), progress.count("failed")], [1, 1]);
    assert.deepEqual(uploads, ["AAAAAAAA"]);
    assert.ok(
      lines.includes(
        "failed images/BBBBBBBB.png (BBBBBBBB): the file does not match the manifest's hash",
      ),
      lines.join("\n"),
    );
  } finally {
    await server.shutdown();
    await Deno.remove(dir, { recursive: true });
  }
});
