/**
 * The durable job queue (adapters/jobs/): jobs survive a restart, run once across replicas, are
 * retried with back-off and then kept, failed, with their error; a job whose worker died is taken
 * up by another. Against the test PostgreSQL, two queue instances standing for two replicas.
 */
import assert from "node:assert/strict";
import postgres from "postgres";
import { type Job, JobQueue } from "../adapters/jobs/mod.ts";
import { captureLogger } from "../adapters/log.ts";
import { freshDatabase } from "./_harness/db.ts";
import { FORMER_QUEUE_NAMES, QUEUE_NAMES } from "../services/queues.ts";
import { similarBackfillKind } from "../services/similar/backfill.ts";

const db = await freshDatabase();
const { log } = captureLogger("warn");
const open: JobQueue[] = [];
async function queue(superviseSeconds?: number) {
  const q = await JobQueue.start(db.url, log, { superviseSeconds });
  open.push(q);
  return q;
}
Deno.test.afterAll(async () => {
  for (const q of open) await q.stop(0).catch(() => {});
  await db.drop();
});

/** How many jobs of queue `name` are in each state, from pg-boss's table. */
async function jobStates(name: string) {
  const sql = postgres(db.url, { max: 1, onnotice: () => {} });
  try {
    return [
      ...await sql<{ state: string; n: number }[]>`
      select state::text, count(*)::int as n from jobs.job where name = ${name}
      group by state order by state`,
    ];
  } finally {
    await sql.end();
  }
}

/** Resolves once `check()` is true, polling; rejects after `ms`. */
async function until(check: () => boolean | Promise<boolean>, ms: number, what: string) {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

Deno.test("a job sent before a restart is run after it, once", async () => {
  const first = await queue();
  await first.declare({ name: "restart" });
  await first.send("restart", { n: 1 });
  await first.stop();
  const seen: number[] = [];
  const second = await queue();
  await second.work<{ n: number }>({
    name: "restart",
    handler: (j) => {
      seen.push(j.data.n);
      return Promise.resolve();
    },
  });
  await until(() => seen.length === 1, 10_000, "the job ran");
  // Once by count: the queue stopped (its running handlers finished) with the job completed, so
  // nothing can run it again, and the handler ran it once.
  await second.stop();
  assert.deepEqual(await jobStates("restart"), [{ state: "completed", n: 1 }]);
  assert.deepEqual(seen, [1]);
});

Deno.test("two replicas working one queue run every job exactly once", async () => {
  const [a, b] = [await queue(), await queue()];
  const runs = new Map<number, string[]>();
  const handler = (who: string) => async (j: Job<{ n: number }>) => {
    runs.set(j.data.n, [...runs.get(j.data.n) ?? [], who]);
    await new Promise((r) => setTimeout(r, 10));
  };
  await a.work({ name: "shared", handler: handler("a"), concurrency: 2 });
  await b.work({ name: "shared", handler: handler("b"), concurrency: 2 });
  for (let n = 0; n < 40; n++) await a.send("shared", { n });
  await until(() => runs.size === 40, 30_000, "40 jobs ran");
  // Exactly once by count: both queues stopped (their running handlers finished) with all 40
  // jobs completed, so none can run again, and the handlers ran 40 times in all.
  await Promise.all([a.stop(), b.stop()]);
  assert.deepEqual(await jobStates("shared"), [{ state: "completed", n: 40 }]);
  assert.equal([...runs.values()].flat().length, 40, "handler runs");
  for (const [n, who] of runs) assert.equal(who.length, 1, `job ${n} ran ${who.join(", ")}`);
  const by = [...runs.values()].flat();
  assert.ok(by.includes("a") && by.includes("b"), "both replicas worked");
});

Deno.test("a failing job is retried with growing delays, then kept failed with its error", async () => {
  const q = await queue(1);
  const attempts: number[] = [];
  await q.work({
    name: "flaky",
    retryLimit: 2,
    retryDelaySeconds: 1,
    handler: (j) => {
      attempts.push(Date.now());
      return Promise.reject(new Error(`attempt ${j.retryCount + 1} failed`));
    },
  });
  const id = await q.send("flaky", { what: "always fails" });
  await until(async () => (await q.failed("flaky")).some((f) => f.id === id), 30_000, "failed");
  assert.equal(attempts.length, 3, "the first attempt and two retries");
  const gaps = [attempts[1] - attempts[0], attempts[2] - attempts[1]];
  assert.ok(gaps[0] >= 1000, `first retry after ${gaps[0]} ms`);
  assert.ok(gaps[1] >= gaps[0] * 0.9, `back-off grows: ${gaps.join(", ")} ms`);
  const [failed] = await q.failed("flaky");
  assert.equal(failed.error, "attempt 3 failed");
  assert.deepEqual(failed.data, { what: "always fails" });
  // The counts are refreshed by the queue's supervision, every second here.
  await until(async () => (await q.stats(["flaky"]))[0].failed === 1, 10_000, "counted failed");
  const [stats] = await q.stats(["flaky"]);
  assert.equal(stats.queued + stats.active, 0);
  // `deno task jobs` shows the same, with the failure's error.
  const task = await new Deno.Command(Deno.execPath(), {
    args: ["task", "--quiet", "jobs"],
    env: { DATABASE_URL: db.url },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const out = new TextDecoder().decode(task.stdout);
  assert.equal(task.code, 0, new TextDecoder().decode(task.stderr));
  assert.match(out, /│ flaky\s+│\s+0\s+│\s+0\s+│\s+1\s+│/);
  assert.match(out, /Last failures of flaky:\n {2}\S+ after 3 tries: attempt 3 failed/);
});

Deno.test("a job whose worker died is taken up by another replica", async () => {
  const dying = await queue(1);
  let started = false;
  await dying.work({
    name: "orphan",
    expireInSeconds: 2,
    handler: () => {
      started = true;
      return new Promise<void>(() => {}); // the worker dies before it finishes
    },
  });
  await dying.send("orphan", { n: 7 });
  await until(() => started, 10_000, "the first worker took the job");
  await dying.stop(0); // gone, its job still active
  const done: number[] = [];
  const other = await queue(1);
  await other.work<{ n: number }>({
    name: "orphan",
    expireInSeconds: 2,
    handler: (j) => {
      done.push(j.data.n);
      return Promise.resolve();
    },
  });
  await until(() => done.length === 1, 30_000, "another replica ran it");
  assert.deepEqual(done, [7]);
});

/**
 * What another replica runs of queue `name` once it works it: each job's data `n` and the tries
 * it had spent, after `count` jobs ran.
 */
async function ranElsewhere(name: string, count: number) {
  const seen: { n: number; tries: number }[] = [];
  const next = await queue();
  await next.work<{ n: number }>({
    name,
    handler: (j) => {
      seen.push({ n: j.data.n, tries: j.retryCount });
      return Promise.resolve();
    },
  });
  await until(() => seen.length === count, 10_000, `${count} jobs of ${name} ran elsewhere`);
  return seen;
}

Deno.test("after stopTaking no job is taken, the running one finishes, and the rest wait untried", async () => {
  const q = await queue();
  let release!: () => void;
  const running = new Promise<void>((r) => release = r);
  const started: number[] = [];
  const finished: number[] = [];
  await q.work<{ n: number }>({
    name: "draining",
    concurrency: 2, // one worker stays free to take a job
    handler: async (j) => {
      started.push(j.data.n);
      if (j.data.n === 1) await running;
      finished.push(j.data.n);
    },
  });
  await q.send("draining", { n: 1 });
  await until(() => started.length === 1, 10_000, "the first job started");
  await q.stopTaking();
  for (let n = 2; n <= 4; n++) await q.send("draining", { n });
  await new Promise((r) => setTimeout(r, 1500)); // several polls and notifications
  assert.deepEqual(started, [1], "nothing new is taken");
  release();
  await until(() => finished.length === 1, 10_000, "the running job finished");
  await q.stop();
  // The others are still queued, with no try spent: another worker runs each of them once.
  const seen = await ranElsewhere("draining", 3);
  assert.deepEqual(seen.map((s) => s.n).sort(), [2, 3, 4]);
  assert.ok(seen.every((s) => s.tries === 0), JSON.stringify(seen));
});

Deno.test("a job that fails because the queue is stopping goes back to the queue untried", async () => {
  const q = await queue();
  let close!: (e: Error) => void;
  const closed = new Promise<never>((_, reject) => close = reject);
  const started: number[] = [];
  await q.work<{ n: number }>({
    name: "interrupted",
    handler: async (j) => {
      started.push(j.data.n);
      await closed; // what it needs closes under it, as the caption reader does at a stop
    },
  });
  await q.send("interrupted", { n: 1 });
  await until(() => started.length === 1, 10_000, "the job started");
  await q.stopTaking();
  close(new Error("The caption reader is closed"));
  await q.stop();
  const seen = await ranElsewhere("interrupted", 1);
  assert.deepEqual(seen, [{ n: 1, tries: 0 }]);
});

Deno.test("a kind also works the jobs still queued under its former names", async () => {
  // An older version sent to "old-name" and stopped; the new one works "new-name".
  const older = await queue();
  await older.declare({ name: "old-name" });
  await older.send("old-name", { n: 1 });
  await older.send("old-name", { n: 2 });
  await older.stop();
  const seen: number[] = [];
  const newer = await queue();
  await newer.work<{ n: number }>({
    name: "new-name",
    // "never-was" has no queue: nothing to work, and no error.
    formerNames: ["old-name", "never-was"],
    handler: (j) => (seen.push(j.data.n), Promise.resolve()),
  });
  await newer.send("new-name", { n: 3 });
  await until(() => seen.length === 3, 10_000, "the jobs of both names ran");
  await newer.stop();
  assert.deepEqual(seen.toSorted(), [1, 2, 3]);
  assert.deepEqual(await jobStates("old-name"), [{ state: "completed", n: 2 }]);
});

Deno.test("queue names follow one pattern, <concept>-<work>, and the renamed keep their old", () => {
  assert.deepEqual(QUEUE_NAMES, [
    "caption-recognition",
    "caption-backfill",
    "similar-backfill",
    "tag-implications",
    "video-rendition",
    "video-backfill",
  ]);
  for (const name of QUEUE_NAMES) assert.match(name, /^(caption|similar|tag|video)-[a-z]+$/);
  assert.deepEqual(FORMER_QUEUE_NAMES, { "similar-backfill": ["phash-backfill"] });
  // The similar backfill's kind works its former queue, where jobs of `phash:backfill` may wait.
  const kind = similarBackfillKind({} as Parameters<typeof similarBackfillKind>[0]);
  assert.equal(kind.name, "similar-backfill");
  assert.deepEqual(kind.formerNames, ["phash-backfill"]);
});
