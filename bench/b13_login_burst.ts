/**
 * B13: latency of GET /api/v1/health while 20 accounts sign in at the same moment, each costing
 * one scrypt hash at OWASP's parameters (N=2^17, r=8, p=1: 128 MiB and hundreds of milliseconds
 * each), against the same prober with nothing else going on, in the same run. The hashes run in
 * Web Workers at a low priority, HASH_SLOTS at a time (services/passwords.ts), so the event loop
 * should stay free.
 * BURSTS bursts on one service; the percentiles pool their probes.
 */
import postgres from "postgres";
import { OWASP_SCRYPT, scryptHasher } from "../services/passwords.ts";
import { benchMain } from "./_lib/bench_main.ts";
import { freshBenchDatabase } from "./_lib/databases.ts";
import { PROBE_INTERVAL_MS, type Probes, probeWhile } from "./_lib/prober.ts";
import { ms, type Row, x } from "./_lib/results.ts";
import { spawnBenchService } from "./_lib/service.ts";
import { percentile } from "./_lib/stats.ts";

const SIGN_INS = 20;
const BURSTS = 3;
const IDLE_MS = 3000;
const PASSWORD = "a member's long password";

const sleep = (t: number) => new Promise((r) => setTimeout(r, t));

/** Twenty sign-ins sent at once; their statuses and how long the last took. */
async function burst(base: string): Promise<{ statuses: number[]; ms: number }> {
  const started = performance.now();
  const statuses = await Promise.all(
    Array.from({ length: SIGN_INS }, async (_, i) => {
      const res = await fetch(`${base}/api/v1/auth/token`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ username: `member_${i}`, password: PASSWORD }),
      });
      await res.arrayBuffer();
      return res.status;
    }),
  );
  return { statuses, ms: performance.now() - started };
}

if (import.meta.main) {
  await benchMain(
    "B13",
    "health latency while 20 sign-ins hash their passwords at once",
    async (notes) => {
      const db = await freshBenchDatabase();
      try {
        const svc = await spawnBenchService(db.url, null);
        try {
          const t0 = performance.now();
          const hash = await scryptHasher(OWASP_SCRYPT).hash(PASSWORD);
          notes.push(
            `one scrypt hash (N=2^17, r=8, p=1) in the bench process: ${
              ms(performance.now() - t0)
            }`,
          );
          const sql = postgres(db.url, { max: 1 });
          try {
            for (let i = 0; i < SIGN_INS; i++) {
              await sql`insert into users (username, password_hash, role)
                values (${`member_${i}`}, ${hash}, 'member')`;
            }
          } finally {
            await sql.end({ timeout: 2 });
          }
          const idle = await probeWhile(svc.base, () => sleep(IDLE_MS));
          const probes: Probes[] = [];
          const outcomes: { statuses: number[]; ms: number }[] = [];
          for (let b = 0; b < BURSTS; b++) {
            probes.push(
              await probeWhile(svc.base, async () => {
                await sleep(100);
                outcomes.push(await burst(svc.base));
              }),
            );
          }
          const busy: Probes = {
            latencies: probes.flatMap((p) => p.latencies),
            errors: probes.reduce((n, p) => n + p.errors, 0),
            lag: Math.max(...probes.map((p) => p.lag)),
          };
          notes.push(
            `${BURSTS} bursts of ${SIGN_INS} sign-ins (each a different account, one scrypt ` +
              `verification each), health every ${PROBE_INTERVAL_MS} ms from a process of its ` +
              `own; ${idle.latencies.length} probes idle (errors ${idle.errors}), ` +
              `${busy.latencies.length} during the bursts (errors ${busy.errors}); the prober's ` +
              `own timer at most ${ms(busy.lag)} late`,
            ...outcomes.map((o, i) =>
              `burst ${i + 1}: ${o.statuses.filter((s) => s === 200).length}/${SIGN_INS} signed ` +
              `in (others: ${o.statuses.filter((s) => s !== 200).join(",") || "none"}), the ` +
              `last answered after ${(o.ms / 1000).toFixed(1)} s`
            ),
          );
          const stat = (p: Probes, q: number) => percentile(p.latencies, q);
          const what = `${SIGN_INS} sign-ins at once (scrypt N=2^17), ${BURSTS} bursts`;
          const row = (metric: string, q: number, target: string, met: boolean | null): Row => ({
            metric,
            value: ms(stat(busy, q)),
            baseline: `idle ${ms(stat(idle, q))}`,
            ratio: x(stat(busy, q) / stat(idle, q)),
            target,
            met,
          });
          return [
            row(`health p50, ${what}`, 50, "-", null),
            row(`health p99, ${what}`, 99, "p99 < 20 ms", stat(busy, 99) < 20),
            row(`health max, ${what}`, 100, "-", null),
          ];
        } finally {
          await svc.stop();
        }
      } finally {
        await db.drop();
      }
    },
  );
}
