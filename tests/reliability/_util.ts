/**
 * Shared helpers of the reliability tests: timeouts, the bucket-versus-tables consistency check,
 * hostile inputs (pixel bombs, corruptions, polyglots) and a thumbnailer that sabotages workers.
 */
import assert from "node:assert/strict";
import { sweepPendingDeletes } from "../../services/deleter.ts";
import { originalKey } from "../../domain/storage_keys.ts";
import type { Thumbnailer } from "../../services/deps.ts";
import type { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import type { TestService } from "../_harness/app.ts";

const enc = new TextEncoder();

/** UTF-8 bytes of `s`. */
export function te(s: string): Uint8Array<ArrayBuffer> {
  return new Uint8Array(enc.encode(s));
}

/** Joins byte arrays. */
export function concat(...parts: Uint8Array[]): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Resolves like `p`, or rejects with a message naming `label` after `ms`. */
export async function within<T>(p: Promise<T> | T, ms: number, label: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      Promise.resolve(p),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${label}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `ready` every `intervalMs` until it holds; throws naming `what` after `ms`. */
export async function until(
  what: string,
  ready: () => boolean | Promise<boolean>,
  ms = 30_000,
  intervalMs = 5,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Waits `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** The status, after the body was read (so no resource is left open). */
export async function statusOf(res: Response | Promise<Response>): Promise<number> {
  const r = await res;
  await r.body?.cancel();
  return r.status;
}

/** Content types a byte route may ever answer with: the sniffed image types. */
export const IMAGE_TYPES = new Set([
  "image/jpeg",
  "image/png",
  "image/gif",
  "image/webp",
  "image/avif",
]);

/** Asserts a byte response is an image type (never HTML or SVG) with nosniff. */
export function assertSafeBytes(res: Response, label: string) {
  const type = (res.headers.get("content-type") ?? "").toLowerCase();
  assert.ok(!/html|svg|xml|javascript|text\//.test(type), `${label}: served as ${type}`);
  assert.ok(IMAGE_TYPES.has(type.split(";")[0].trim()), `${label}: unexpected type ${type}`);
  assert.equal(res.headers.get("x-content-type-options"), "nosniff", `${label}: no nosniff`);
}

/**
 * Every object under images/ and thumbnails/ has its row and every row has its objects. Due
 * pending deletes are swept first (a delete's objects may still wait for the sweeper); nothing
 * may be in flight while this runs.
 */
export async function assertBucketMatchesTables(svc: Pick<TestService, "db" | "s3">) {
  // Keys of uploads whose outcome was unknown wait out their guard (an hour) in pending_deletes
  // before the sweeper decides; let that hour pass, then sweep as the service would.
  await svc.db.sql`update pending_deletes set next_attempt_at = now()`;
  await sweepPendingDeletes(svc.db.sql, svc.s3.store);
  const objects = new Set([
    ...await Array.fromAsync(svc.s3.store.list("images/")),
    ...await Array.fromAsync(svc.s3.store.list("thumbnails/")),
  ]);
  const rows = await svc.db.sql<{ short_id: string; thumbnail_key: string | null }[]>`
    select short_id, thumbnail_key from images`;
  const expected = new Set<string>();
  for (const r of rows) {
    expected.add(originalKey(r.short_id));
    if (r.thumbnail_key) expected.add(r.thumbnail_key);
  }
  const missing = [...expected].filter((k) => !objects.has(k));
  const orphans = [...objects].filter((k) => !expected.has(k));
  const pending = (await svc.db.sql<{ key: string }[]>`select key from pending_deletes`)
    .map((r) => r.key);
  assert.deepEqual(missing, [], `rows without their objects (pending: ${pending.join(" ")})`);
  assert.deepEqual(orphans, [], `objects without a row (pending: ${pending.join(" ")})`);
}

/**
 * What the triggers keep that differs from image_tags: tags whose stored image_count is not
 * COUNT(*) over their links, and images whose tag IDs (migration 010) are not their links.
 */
export async function tagCountDrift(svc: TestService) {
  return [
    ...await svc.db.sql`
    select t.name, t.image_count,
      (select count(*)::int from image_tags it where it.tag_id = t.id) as actual
    from tags t where t.image_count <> (select count(*) from image_tags it where it.tag_id = t.id)`,
    ...await svc.db.sql`
    select i.short_id, i.tag_ids::text as stored, l.ids::text as actual
    from images i
    cross join lateral (select array(select tag_id from image_tags where image_id = i.id
                                     order by tag_id) as ids) l
    where array(select unnest(i.tag_ids) order by 1) <> l.ids`,
  ];
}

/** A deterministic pseudo-random generator (mulberry32), so failures reproduce. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `bytes` with `n` bits flipped at positions at or after `from`. */
export function flipBits(bytes: Uint8Array, n: number, from: number, seed: number): Uint8Array {
  const out = bytes.slice();
  const rnd = prng(seed);
  for (let i = 0; i < n; i++) {
    const at = from + Math.floor(rnd() * (out.length - from));
    out[at] ^= 1 << Math.floor(rnd() * 8);
  }
  return out;
}

const u32be = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255];
const u24le = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255];

/** Headers only, claiming `w`x`h` pixels, for each sniffed format except AVIF. */
export const pixelBombs = {
  png: (w: number, h: number) =>
    new Uint8Array([
      0x89,
      0x50,
      0x4e,
      0x47,
      0x0d,
      0x0a,
      0x1a,
      0x0a,
      ...[0, 0, 0, 13],
      ...te("IHDR"),
      ...u32be(w),
      ...u32be(h),
      8,
      2,
      0,
      0,
      0,
      ...[0, 0, 0, 0], // CRC (nobody should get as far as checking it)
    ]),
  gif: (w: number, h: number) =>
    new Uint8Array([
      ...te("GIF89a"),
      w & 255,
      w >> 8,
      h & 255,
      h >> 8,
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
      w & 255,
      w >> 8,
      h & 255,
      h >> 8,
      0,
      0x02,
      0x02,
      0x44,
      0x01,
      0,
      0x3b,
    ]),
  // A 1 x 1 logical screen around a w x h frame: the canvas a decoder allocates is the frame's.
  gifFrame: (w: number, h: number) =>
    new Uint8Array([
      ...te("GIF89a"),
      ...[1, 0, 1, 0, 0x80, 0, 0],
      ...[0, 0, 0, 0xff, 0xff, 0xff],
      ...[0x2c, 0, 0, 0, 0, w & 255, w >> 8, h & 255, h >> 8, 0],
      ...[0x02, 0x02, 0x44, 0x01, 0, 0x3b],
    ]),
  jpeg: (w: number, h: number) =>
    new Uint8Array([
      0xff,
      0xd8,
      0xff,
      0xc0,
      0x00,
      0x11,
      0x08,
      h >> 8,
      h & 255,
      w >> 8,
      w & 255,
      3,
      1,
      0x22,
      0,
      2,
      0x11,
      1,
      3,
      0x11,
      1,
      0xff,
      0xd9,
    ]),
  webp: (w: number, h: number) =>
    new Uint8Array([
      ...te("RIFF"),
      22,
      0,
      0,
      0,
      ...te("WEBP"),
      ...te("VP8X"),
      10,
      0,
      0,
      0,
      0,
      0,
      0,
      0,
      ...u24le(w - 1),
      ...u24le(h - 1),
    ]),
};

/**
 * A thumbnailer whose every job goes to `pool` behind `prefix` (TEST_CRASH or TEST_HANG), so a
 * real upload, which is sniffed first, still reaches a sabotaged worker. `armed()` decides per
 * job; when it returns false the job goes through untouched.
 */
export function sabotaged(
  pool: ThumbnailPool,
  prefix: string,
  armed: () => boolean = () => true,
): Thumbnailer {
  return {
    thumbnail: (b) => pool.thumbnail(armed() ? concat(te(prefix), b) : b),
  };
}

/** Sends a raw HTTP/1.1 request on a fresh connection; `then` runs after the write. */
export async function rawHttp(
  port: number,
  head: string,
  body: Uint8Array,
  opts: { closeWrite?: boolean; timeoutMs: number },
): Promise<{ status: number | null; text: string; timedOut: boolean }> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      conn.close();
    } catch { /* closed already */ }
  }, opts.timeoutMs);
  const chunks: Uint8Array[] = [];
  try {
    await conn.write(concat(te(head), body));
    if (opts.closeWrite) await conn.closeWrite();
    const buf = new Uint8Array(16 * 1024);
    for (;;) {
      const n = await conn.read(buf);
      if (n === null) break;
      chunks.push(buf.slice(0, n));
      const sofar = new TextDecoder().decode(concat(...chunks));
      // Enough to judge once the head and a JSON body are in.
      if (/\r\n\r\n[\s\S]*\}\s*$/.test(sofar)) break;
    }
  } catch {
    // reset or closed by the timer
  } finally {
    clearTimeout(timer);
    try {
      conn.close();
    } catch { /* closed already */ }
  }
  const text = new TextDecoder().decode(concat(...chunks));
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(text);
  return { status: m ? Number(m[1]) : null, text, timedOut };
}

/**
 * A TCP proxy in front of PostgreSQL that can cut the connection right after the server has
 * committed: `dropCommitReply(n)` makes it close the connection instead of forwarding the n-th
 * CommandComplete "COMMIT" that follows, so the client never learns that its commit succeeded.
 */
export function startPgProxy(target: { hostname: string; port: number }) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let dropAt = 0;
  let commits = 0;
  let dropped = 0;
  const conns = new Set<Deno.Conn>();
  const COMMIT = te("COMMIT\0");
  const hasCommit = (b: Uint8Array) => {
    outer: for (let i = 0; i + COMMIT.length <= b.length; i++) {
      for (let j = 0; j < COMMIT.length; j++) if (b[i + j] !== COMMIT[j]) continue outer;
      return true;
    }
    return false;
  };
  const pipe = async (from: Deno.Conn, to: Deno.Conn, watch: boolean) => {
    const buf = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const n = await from.read(buf);
        if (n === null) break;
        const chunk = buf.subarray(0, n);
        if (watch && dropAt > 0 && hasCommit(chunk) && ++commits === dropAt) {
          dropAt = 0;
          dropped++;
          break; // the server committed; the client never hears of it
        }
        let off = 0;
        while (off < n) off += await to.write(chunk.subarray(off));
      }
    } catch { /* either side went away */ }
    for (const c of [from, to]) {
      try {
        c.close();
      } catch { /* closed already */ }
      conns.delete(c);
    }
  };
  (async () => {
    for await (const client of listener) {
      const server = await Deno.connect(target).catch(() => null);
      if (!server) {
        client.close();
        continue;
      }
      conns.add(client);
      conns.add(server);
      pipe(client, server, false);
      pipe(server, client, true);
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    dropCommitReply(n: number) {
      commits = 0;
      dropAt = n;
    },
    get dropped() {
      return dropped;
    },
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed already */ }
      }
    },
  };
}
