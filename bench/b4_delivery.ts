/**
 * B4: delivery of originals through the service (GET /api/v1/images/{id}/file; the 1 MiB object
 * from the delivery cache, and again with the cache off, streamed from s3rver) at concurrency 16, against GETs of the same object from s3rver directly (anonymous
 * GET of the path-style URL: s3rver accepts unsigned GETs, so no signing cost is added to the
 * baseline), plus If-None-Match 304s, and the service's RSS while it streams a 100 MB object.
 *
 * The objects are put into s3rver and their rows inserted directly (delivery does not care how
 * they got there; a 100 MB upload would exceed MAX_UPLOAD_BYTES anyway).
 */
import postgres from "postgres";
import { benchMain } from "./_lib/bench_main.ts";
import { cpuMs, memoryKb } from "./_lib/machine.ts";
import { freshBenchDatabase } from "./_lib/databases.ts";
import { load } from "./_lib/load.ts";
import { ms, perS, x } from "./_lib/results.ts";
import { photoJpeg } from "../tests/_harness/photos.ts";
import type { ChildS3 } from "../tests/_harness/s3_process.ts";
import { s3rverStore } from "../tests/_harness/s3.ts";
import { spawnBenchService, startBenchS3 } from "./_lib/service.ts";
import { spawnReady } from "./_lib/processes.ts";

const MiB = 1024 * 1024;

async function putObject(s3: ChildS3, sql: postgres.Sql, shortId: string, bytes: Uint8Array) {
  const store = s3rverStore(s3);
  await store.put(`images/${shortId}`, bytes, {
    contentLength: bytes.length,
    contentType: "image/jpeg",
  });
  const hash = crypto.randomUUID().replaceAll("-", "").padEnd(64, "0");
  await sql`insert into images (short_id, hash, content_type, size_bytes, width, height)
            values (${shortId}, ${hash}, 'image/jpeg', ${bytes.length}, 1000, 1000)`;
  return hash;
}

/**
 * Opens a 100 MB stream, reads one chunk, then reads nothing for 1.5 s: whatever the RSS of
 * `pid` gains meanwhile was buffered without backpressure (nothing was consumed, so it is not
 * garbage waiting for a collection). Returns the growth in MB.
 */
async function pausedGrowth(pid: number, open: () => Promise<ReadableStream<Uint8Array>>) {
  const before = (await memoryKb(pid)).rss;
  const reader = (await open()).getReader();
  await reader.read();
  await new Promise((r) => setTimeout(r, 1500));
  const after = (await memoryKb(pid)).rss;
  await reader.cancel();
  await new Promise((r) => setTimeout(r, 300));
  return (after - before) / 1024;
}

/** GETs the 100 MB object through the service as fast as possible; its RSS every 10 ms. */
async function streamBig(base: string, pid: number) {
  const before = await memoryKb(pid);
  let peak = before.rss;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      peak = Math.max(peak, (await memoryKb(pid)).rss);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v1/images/bench100/file`);
  let bytes = 0;
  for await (const chunk of res.body!) bytes += chunk.length;
  const bigMs = performance.now() - t0;
  sampling = false;
  await sampler;
  const after = await memoryKb(pid);
  return { before, peak, after, bytes, bigMs, growthMb: (peak - before.rss) / 1024 };
}

/** Two alternating rounds of each, so a noisy second hits both sides; CPU of `pids` per side. */
async function compare(
  a: () => Promise<Response>,
  b: () => Promise<Response>,
  pids: number[],
  ok: (res: Response) => boolean = (res) => res.ok,
) {
  const totals = {
    a: { n: 0, ms: 0, err: 0, cpu: pids.map(() => 0) },
    b: { n: 0, ms: 0, err: 0, cpu: pids.map(() => 0) },
  };
  for (let round = 0; round < 2; round++) {
    for (const side of round === 0 ? ["a", "b"] as const : ["b", "a"] as const) {
      const cpu0 = await Promise.all(pids.map(cpuMs));
      const r = await load(
        { concurrency: 16, durationMs: 4000, maxRequests: 100_000, warmup: 2 },
        side === "a" ? a : b,
        ok,
      );
      totals[side].n += r.requests;
      totals[side].ms += r.elapsedMs;
      totals[side].err += r.errors;
      const cpu1 = await Promise.all(pids.map(cpuMs));
      pids.forEach((_, i) => (totals[side].cpu[i] += cpu1[i] - cpu0[i]));
    }
  }
  /** CPU ms per request of each pid, per side. */
  const perRequest = (side: "a" | "b") =>
    totals[side].cpu.map((c) => (c / Math.max(1, totals[side].n)).toFixed(2)).join(" / ");
  return {
    a: totals.a.n / (totals.a.ms / 1000),
    b: totals.b.n / (totals.b.ms / 1000),
    errors: totals.a.err + totals.b.err,
    cpuA: perRequest("a"),
    cpuB: perRequest("b"),
  };
}

if (import.meta.main) {
  await benchMain("B4", "delivery of originals through the service", async (notes) => {
    const db = await freshBenchDatabase();
    try {
      const s3 = await startBenchS3();
      const svc = await spawnBenchService(db.url, s3);
      const sql = postgres(db.url, { max: 1, onnotice: () => {} });
      // A real JPEG padded after its end marker to exactly 1 MiB.
      const jpeg = await photoJpeg(900, 700, 4);
      const small = new Uint8Array(MiB);
      small.set(jpeg.subarray(0, Math.min(jpeg.length, MiB)));
      const big = new Uint8Array(100 * 1000 * 1000);
      for (let i = 0; i < big.length; i += 4096) big[i] = i & 0xff;
      const hash = await putObject(s3, sql, "bench1Mi", small);
      await putObject(s3, sql, "bench100", big);
      await sql.end();

      // The service as configured by default: after the first GET the 1 MiB object is served
      // from its delivery cache (DELIVERY_CACHE_MB); the run without it is reported below.
      const viaService = () => fetch(`${svc.base}/api/v1/images/bench1Mi/file`);
      const direct = () => fetch(`${s3.endpoint}/${s3.bucket}/images/bench1Mi`);
      const check = await viaService();
      const got = (await check.arrayBuffer()).byteLength;
      if (got !== MiB) throw new Error(`service returned ${got} bytes`);
      // First, on a fresh process: 100 MB through the service, read as fast as the client can,
      // its RSS sampled every 10 ms.
      const { before, peak, after, bytes, bigMs, growthMb } = await streamBig(svc.base, svc.pid);
      const rssStart = await memoryKb(svc.pid);
      const pids = [svc.pid, s3.pid(), Deno.pid];
      const full = await compare(viaService, direct, pids);
      const conditional = () =>
        fetch(`${svc.base}/api/v1/images/bench1Mi/file`, {
          headers: { "if-none-match": `"${hash}"` },
        });
      const cond = await compare(
        conditional,
        viaService,
        pids,
        (res) => res.status === 304 || res.ok,
      );
      const rssEnd = await memoryKb(svc.pid);

      // Where the proxy's CPU goes: reading the 1 MiB object in this process through S3Store
      // (as the service does) against plain fetch(), concurrency 16, 3 s each.
      const s3Store = s3rverStore(s3);
      const readCost = async (fn: () => Promise<Response>) => {
        const c0 = await cpuMs(Deno.pid);
        const r = await load({ concurrency: 16, durationMs: 3000, maxRequests: 50_000 }, fn);
        return { rps: r.rps, cpu: ((await cpuMs(Deno.pid)) - c0) / Math.max(1, r.requests) };
      };
      const viaStore = await readCost(async () => {
        const obj = await s3Store.get("images/bench1Mi");
        return new Response(obj!.body);
      });
      const viaFetch = await readCost(direct);
      notes.push(
        `reading the 1 MiB object in the bench process, concurrency 16: S3Store.get ${
          perS(viaStore.rps)
        } at ${viaStore.cpu.toFixed(2)} CPU ms/request; fetch() ${perS(viaFetch.rps)} at ${
          viaFetch.cpu.toFixed(2)
        } CPU ms/request`,
      );

      // Is that growth buffering (no backpressure) or garbage not yet collected? (1) a second
      // fast read on the same process; (2) on a fresh process, a client that reads one chunk
      // and then pauses 1.5 s: what the RSS gains then was buffered, since nothing was consumed.
      const second = await streamBig(svc.base, svc.pid);
      // The same service without its delivery cache: every GET streams from s3rver.
      const svc2 = await spawnBenchService(db.url, s3, { DELIVERY_CACHE_MB: "0" });
      const uncached = await compare(
        () => fetch(`${svc2.base}/api/v1/images/bench1Mi/file`),
        direct,
        [svc2.pid, s3.pid(), Deno.pid],
      );
      const paused = await pausedGrowth(
        svc2.pid,
        async () => (await fetch(`${svc2.base}/api/v1/images/bench100/file`)).body!,
      );
      await svc2.stop();
      // The same fast read of the 100 MB object in fresh processes: S3Store's stream, which the
      // service uses, against fetch().
      const freshRead = async (mode: string) => {
        const child = await spawnReady<{ growthMb: number; bytes: number }>("bench/_read_big.ts", {
          READ_MODE: mode,
          S3_ENDPOINT: s3.endpoint,
          S3_BUCKET: s3.bucket,
          READ_KEY: "images/bench100",
        });
        await child.stop();
        return child.info.growthMb;
      };
      const storeGrowth = await freshRead("store");
      const fetchGrowth = await freshRead("fetch");
      notes.push(
        `100 MB read as fast as possible in a fresh process (no HTTP serving): S3Store.get ` +
          `RSS +${storeGrowth.toFixed(1)} MB, fetch() RSS +${fetchGrowth.toFixed(1)} MB`,
      );
      notes.push(
        `100 MB object again on the same process: RSS +${
          second.growthMb.toFixed(1)
        } MB (peak over before); on a fresh process, a client that reads one chunk then pauses ` +
          `1.5 s: RSS +${paused.toFixed(1)} MB`,
      );
      notes.push(
        `1 MiB object; errors during throughput runs: ${full.errors + cond.errors}; ` +
          `CPU ms per request (service / s3rver / load generator): via service ${full.cpuA}, ` +
          `direct ${full.cpuB}, 304 ${cond.cpuA}, via service without the cache ` +
          `${uncached.cpuA}; service VmRSS ${
            (rssStart.rss / 1024).toFixed(0)
          } MB before the throughput runs, ${(rssEnd.rss / 1024).toFixed(0)} MB after; ` +
          `100 MB object: ${bytes} bytes in ${ms(bigMs)}; service VmRSS ${
            (before.rss / 1024).toFixed(0)
          } MB before, peak ${(peak / 1024).toFixed(0)} MB while streaming, ${
            (after.rss / 1024).toFixed(0)
          } MB after; VmHWM ${(before.hwm / 1024).toFixed(0)} -> ${
            (after.hwm / 1024).toFixed(0)
          } MB`,
      );
      return [
        {
          metric: "GET /images/{id}/file, 1 MiB, concurrency 16",
          value: perS(full.a),
          baseline: `s3rver direct (anonymous GET) ${perS(full.b)}`,
          ratio: x(full.a / full.b),
          target: ">= 0.9x",
          met: full.a / full.b >= 0.9,
        },
        {
          metric: "the same with DELIVERY_CACHE_MB=0 (every GET streamed from s3rver)",
          value: perS(uncached.a),
          baseline: `s3rver direct ${perS(uncached.b)}`,
          ratio: x(uncached.a / uncached.b),
          target: "- (diagnostic)",
          met: null,
        },
        {
          metric: "If-None-Match 304, concurrency 16",
          value: perS(cond.a),
          baseline: `full GETs via service ${perS(cond.b)}`,
          ratio: x(cond.a / cond.b),
          target: ">= 5x",
          met: cond.a / cond.b >= 5,
        },
        {
          metric: "service RSS growth while serving a 100 MB object (peak - before)",
          value: `${growthMb.toFixed(1)} MB`,
          baseline: `${(before.rss / 1024).toFixed(0)} MB before`,
          ratio: "-",
          target: "< 30 MB",
          met: growthMb < 30,
        },
      ];
    } finally {
      await db.drop();
    }
  });
}
