/**
 * B9: `deno task import` of 1,000 small JPEGs from a folder (the tool in its own process, as a
 * user runs it: start-up, the counting walk and sign-in included) against B8's upload loop
 * (`bench/b8_upload_rate.ts`: one buffered form per request, concurrency 4) on distinct images of
 * the same size, both against the same service, s3rver and PostgreSQL. The baseline runs before
 * and after the import (its mean is the baseline), so a noisy stretch of the shared host hits
 * both sides. The tool's peak memory is read for a 200-file and the 1,000-file import: flat means
 * the same.
 */
import { join } from "node:path";
import { rate } from "./b8_upload_rate.ts";
import { BENCH_PASSWORD, signIn, spawnBenchService, startBenchS3 } from "./_lib/service.ts";
import { benchMain } from "./_lib/bench_main.ts";
import { freshBenchDatabase } from "./_lib/databases.ts";
import { memoryKb } from "./_lib/machine.ts";
import { perS, x } from "./_lib/results.ts";
import { photoJpeg } from "../tests/_harness/photos.ts";
import { ROOT } from "./_lib/processes.ts";
import { upload } from "./_lib/uploads.ts";

const IMPORTED = 1000;
const SMALL_IMPORT = 200;
const BASELINE = 200;
const WIDTH = 320;
const HEIGHT = 240;

/** Writes `count` distinct JPEGs (seeds from `seed`) under `dir`, in ten sub-folders. */
async function writeFolder(dir: string, count: number, seed: number): Promise<number> {
  let bytes = 0;
  for (let i = 0; i < count; i++) {
    const sub = join(dir, `mood${i % 10}`);
    await Deno.mkdir(sub, { recursive: true });
    const jpeg = await photoJpeg(WIDTH, HEIGHT, seed + i);
    bytes += jpeg.length;
    await Deno.writeFile(join(sub, `${i}.jpg`), jpeg);
  }
  return bytes;
}

/** Runs `deno task import` (the task's own flags) on `dir`; its seconds and peak RSS (KiB). */
async function runImport(base: string, dir: string) {
  const { tasks } = JSON.parse(await Deno.readTextFile(new URL("deno.json", ROOT)));
  const args = String(tasks.import).split(" ").slice(1);
  const t0 = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args: [...args, dir, "--url", base, "--concurrency", "4"],
    cwd: ROOT.pathname,
    env: { IMAGEBOARD_PASSWORD: BENCH_PASSWORD, NO_COLOR: "1" },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let hwm = 0;
  const poll = setInterval(() => {
    memoryKb(child.pid).then((m) => {
      if (Number.isFinite(m.hwm)) hwm = Math.max(hwm, m.hwm);
    }).catch(() => {});
  }, 100);
  const out = await child.output();
  clearInterval(poll);
  const seconds = (performance.now() - t0) / 1000;
  const stdout = new TextDecoder().decode(out.stdout);
  const summary = stdout.split("\n").find((l) => l.startsWith("Summary: ")) ?? "(no summary)";
  if (out.code !== 0) {
    throw new Error(
      `import exited ${out.code}: ${summary}\n${new TextDecoder().decode(out.stderr)}`,
    );
  }
  return { seconds, hwmKb: hwm, summary };
}

if (import.meta.main) {
  await benchMain("B9", "import of a folder vs the B8 upload rate", async (notes) => {
    const tmp = await Deno.makeTempDir({ prefix: "bench-b9-" });
    const db = await freshBenchDatabase();
    try {
      const big = join(tmp, "big");
      const small = join(tmp, "small");
      const bigBytes = await writeFolder(big, IMPORTED, 50_000);
      await writeFolder(small, SMALL_IMPORT, 60_000);
      const baseline: Uint8Array[][] = [[], []];
      for (let i = 0; i < 2 * BASELINE; i++) {
        baseline[i % 2].push(await photoJpeg(WIDTH, HEIGHT, 70_000 + i));
      }
      const s3 = await startBenchS3();
      const svc = await spawnBenchService(db.url, s3);
      try {
        const auth = await signIn(svc.base);
        for (let i = 0; i < 2; i++) {
          await (await upload(svc.base, auth, await photoJpeg(WIDTH, HEIGHT, 90_000 + i)))
            .arrayBuffer();
        }
        const statuses = new Map<number, number>();
        const uploadOne = async (bytes: Uint8Array) => {
          const res = await upload(svc.base, auth, bytes, ["bench"]);
          await res.arrayBuffer();
          statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
          return res.status === 201;
        };
        const smallRun = await runImport(svc.base, small);
        const before = await rate(baseline[0], 120_000, uploadOne);
        const imported = await runImport(svc.base, big);
        const after = await rate(baseline[1], 120_000, uploadOne);
        const upRate = (before.done + after.done) / (before.seconds + after.seconds);
        const importRate = IMPORTED / imported.seconds;
        notes.push(
          `${IMPORTED} distinct ${WIDTH}x${HEIGHT} JPEGs (~${
            (bigBytes / IMPORTED / 1024).toFixed(0)
          } KiB) in 10 sub-folders, imported by \`deno task import --concurrency 4\` in ${
            imported.seconds.toFixed(1)
          } s from spawn to exit (start-up, the counting walk and sign-in included): "${imported.summary}"; ` +
            `baseline: B8's loop uploading ${BASELINE} other images of the same size before the import (${
              (before.done / before.seconds).toFixed(1)
            }/s) and ${BASELINE} after it (${
              (after.done / after.seconds).toFixed(1)
            }/s), statuses ${
              [...statuses].map(([s, n]) => `${s}x${n}`).join(" ")
            }; service with ${svc.workers} thumbnail worker(s)`,
          `the tool's peak RSS (VmHWM, sampled every 100 ms): ${
            (smallRun.hwmKb / 1024).toFixed(0)
          } MiB importing ${SMALL_IMPORT} files, ${
            (imported.hwmKb / 1024).toFixed(0)
          } MiB importing ${IMPORTED} (files are streamed one per upload in flight; only up to 1,000 paths per outcome are kept for the summary)`,
        );
        return [{
          metric: `import of ${IMPORTED} small JPEGs from a folder, concurrency 4`,
          value: perS(importRate, "files/s"),
          baseline: `B8 upload loop ${perS(upRate, "uploads/s")}`,
          ratio: x(importRate / upRate),
          target: ">= 0.8x",
          met: importRate / upRate >= 0.8,
        }];
      } finally {
        await svc.stop();
        await s3.stop();
      }
    } finally {
      await db.drop();
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
    }
  });
}
