/**
 * A bounded soak: the service in a process of its own (`tests/_harness/soak_service.ts`, on
 * loopback, with a fresh database and s3rver), driven with 500 requests (100 of them warm-up) of
 * mixed reads and uploads over real HTTP. No 5xx other than 503 with Retry-After; the child's resident memory
 * (VmRSS) after warm-up and at the end is printed, and its growth must stay under a generous
 * bound.
 */
import assert from "node:assert/strict";
import { freshDatabase } from "../_harness/db.ts";
import { makeImage, uploadForm } from "../_harness/images.ts";
import { disposeS3, startS3 } from "../_harness/s3.ts";
import { TEST_PASSWORD } from "../_harness/app.ts";
import { childEnv, spawnService } from "../_harness/child.ts";
import { sleep } from "../_harness/waits.ts";

/**
 * The load is counted in requests, not seconds, so that a slow machine sends as much as a fast
 * one (a duration made a busy machine's run too light to judge). SOAK_REQUESTS lengthens the run
 * by hand (the suite keeps it short).
 */
const WARMUP_REQUESTS = 100;
const LOAD_REQUESTS = Number(Deno.env.get("SOAK_REQUESTS") ?? 400);
const CONCURRENCY = 8;
const MAX_GROWTH_MB = 150;

Deno.test("soak: mixed reads and uploads against a separate process, no 5xx, bounded memory growth", async () => {
  const db = await freshDatabase();
  const s3 = await startS3();
  const child = await spawnService(
    ["run", "-A", "tests/_harness/soak_service.ts"],
    childEnv(db, s3, { THUMBNAIL_WORKERS: "1", MAX_UPLOAD_BYTES: "2000000" }),
  );
  try {
    const base = child.base;
    const token = await (await fetch(`${base}/api/v1/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: TEST_PASSWORD }),
    })).json();
    const bearer = { authorization: `Bearer ${token.access_token}` };

    const known: { short_id: string; hash: string }[] = [];
    const counts = new Map<string, number>();
    const problems: string[] = [];
    let requests = 0;
    let uploaded = 0;

    const one = async (worker: number, i: number) => {
      const pick = known.length ? known[(worker * 31 + i) % known.length] : null;
      const kind = !pick || (worker + i) % 5 === 0
        ? "upload"
        : ["list", "detail", "file", "thumb", "tags", "etag"][i % 6];
      let res: Response;
      if (kind === "upload") {
        const bytes = await makeImage(i % 2 ? "jpeg" : "png", 96 + (i % 5) * 40, 80);
        res = await fetch(`${base}/api/v1/images`, {
          method: "POST",
          headers: bearer,
          body: uploadForm(bytes, [`soak${i % 7}`]),
        });
        if (res.status === 201 || res.status === 200) {
          const img = await res.json();
          known.push({ short_id: img.short_id, hash: img.hash });
          uploaded++;
        }
      } else {
        const path = kind === "list"
          ? `/api/v1/images?limit=20&tags=soak${i % 7}`
          : kind === "detail"
          ? `/api/v1/images/${pick!.short_id}`
          : kind === "file"
          ? `/api/v1/images/${pick!.short_id}/file`
          : kind === "thumb"
          ? `/api/v1/images/${pick!.short_id}/thumbnail`
          : kind === "tags"
          ? "/api/v1/tags?sort=count_desc"
          : `/api/v1/images/${pick!.short_id}/file`;
        const headers: Record<string, string> = kind === "etag"
          ? { "if-none-match": `"${pick!.hash}"` }
          : {};
        res = await fetch(`${base}${path}`, { headers });
      }
      requests++;
      const key = `${kind} ${res.status}`;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      if (res.status >= 500 && !(res.status === 503 && res.headers.get("retry-after"))) {
        problems.push(`${key}: ${await res.text()}`);
      } else if (!res.bodyUsed) {
        await res.body?.cancel();
      }
    };

    /** Sends `count` more requests, CONCURRENCY at a time. */
    let sent = 0;
    const run = async (count: number) => {
      const until = sent + count;
      await Promise.all(Array.from({ length: CONCURRENCY }, async (_, w) => {
        for (let i = 0; sent < until; i++) {
          sent++;
          try {
            await one(w, i);
          } catch (e) {
            problems.push(`worker ${w}: ${e}`);
            await sleep(50);
          }
        }
      }));
    };

    await run(WARMUP_REQUESTS);
    const warm = await child.rssKb();
    const warmRequests = requests;
    const loadStarted = performance.now();
    const samples: number[] = [];
    const sampler = setInterval(async () => {
      const kb = await child.rssKb();
      if (kb !== null) samples.push(Math.round(kb / 1024));
    }, 2000);
    try {
      await run(LOAD_REQUESTS);
    } finally {
      clearInterval(sampler);
    }
    await sleep(200);
    const end = await child.rssKb();
    assert.ok(child.alive(), `the service died:\n${child.output().slice(-2000)}`);
    assert.ok(warm !== null && end !== null, "VmRSS readable");

    const growthMb = (end! - warm!) / 1024;
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const rps = Math.round((requests - warmRequests) / loadSeconds);
    console.log(
      `soak: ${requests} requests (${uploaded} uploads), ~${rps} req/s after warm-up; ` +
        `child VmRSS after warm-up ${(warm! / 1024).toFixed(1)} MB, at the end ` +
        `${(end! / 1024).toFixed(1)} MB, growth ${growthMb.toFixed(1)} MB`,
    );
    console.log(`soak: VmRSS every 2 s (MB): ${samples.join(" ")}`);
    console.log(`soak: ${JSON.stringify(Object.fromEntries([...counts].sort()))}`);
    assert.deepEqual(problems.slice(0, 10), [], `${problems.length} problems`);
    // Every request was sent and answered (an error is a problem above); a fifth of them uploads.
    assert.equal(requests, WARMUP_REQUESTS + LOAD_REQUESTS);
    assert.ok(uploaded > 10, `only ${uploaded} uploads stored`);
    assert.ok(growthMb < MAX_GROWTH_MB, `RSS grew by ${growthMb.toFixed(1)} MB`);

    const health = await fetch(`${base}/api/v1/health`);
    assert.equal(health.status, 200);
    await health.body?.cancel();
  } finally {
    await child.stop();
    await db.drop();
    await disposeS3(s3);
  }
});
