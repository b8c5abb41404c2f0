/**
 * The durable job queue: background work that survives restarts and crashes, runs on any replica
 * without being done twice, and is retried with back-off until it succeeds or runs out of tries
 * (then it is kept, failed, with its error). Built on pg-boss (PostgreSQL, `FOR UPDATE SKIP
 * LOCKED`), in its own schema `jobs` and over its own small pool, so that background work never
 * takes a connection a request is waiting for.
 *
 * Chosen against the alternatives (issue 20). Loading pg-boss takes a noticeable part of a cold
 * start, so it is imported only when a queue starts, after the service listens; `start()` creates
 * or migrates its schema under an advisory lock (bench/RESULTS.md#notes-moved-from-code-comments).
 * Its own pool is used rather than an adapter on postgres.js: its schema work sends BEGIN ...
 * COMMIT as one text, which a postgres.js pool refuses, and its maintenance expects every
 * statement's rows back.
 */
import type { Logger } from "../log.ts";

/** What a handler gets for one job. */
export interface Job<T> {
  id: string;
  data: T;
  /** How many earlier attempts failed (0 on the first). */
  retryCount: number;
}

/** Runs one job; a rejection counts as a failed attempt. */
export type JobHandler<T> = (job: Job<T>) => Promise<void>;

/** How a kind of job is retried and run. */
export interface JobKind<T> {
  /** The queue's name: letters, digits, `-`, `_`, `.`. */
  name: string;
  /**
   * Names the queue had before a rename: jobs sent under them before it (by an older replica, or
   * waiting since) are worked by this kind's handler too, never sent to again.
   */
  formerNames?: readonly string[];
  handler: JobHandler<T>;
  /** Attempts after the first (default 5). */
  retryLimit?: number;
  /** Seconds before the first retry, doubling each time up to ten minutes (default 5). */
  retryDelaySeconds?: number;
  /**
   * Longest an attempt may run (default 300 s). An attempt whose worker died is taken up again
   * once this has passed.
   */
  expireInSeconds?: number;
  /** Jobs of this kind run at once in this process (default 1). */
  concurrency?: number;
}

/** One queue's counts, as `deno task jobs` shows them. */
export interface QueueStats {
  name: string;
  /** Waiting to run, now or later (retries included). */
  queued: number;
  active: number;
  /** Failed for good and still kept. */
  failed: number;
  /** Every job stored for the queue. */
  total: number;
  /** Jobs completed per minute over the last refresh, or null before one counted. */
  perMinute: number | null;
}

/** A failed job and why. */
export interface FailedJob {
  id: string;
  data: unknown;
  retryCount: number;
  error: string;
}

// The parts of pg-boss used here, so the rest of the service does not depend on its types.
type Boss = import("pg-boss").PgBoss;

/** See `superviseIntervalSeconds` in `start()`. */
const SUPERVISE_SECONDS = 30;

/**
 * How often an idle worker looks for jobs that became due (retries, jobs of a worker that died);
 * a new job wakes it at once. One cheap query per queue and second.
 */
const POLL_SECONDS = 1;

/** The job queue of one process. */
export class JobQueue {
  /** The queues this process works. */
  readonly #worked = new Set<string>();
  /** Set by stopTaking(): jobs that reach a handler from then on go back to the queue untried. */
  #stopping = false;

  private constructor(
    private readonly boss: Boss,
    private readonly log: Logger,
    private readonly schema: string,
  ) {}

  /**
   * Connects to the database at `url`, creating or migrating the `jobs` schema (safe with several
   * replicas starting at once). `maxConnections` bounds this process's queue pool.
   */
  static async start(
    url: string,
    log: Logger,
    opts: { maxConnections?: number; schema?: string; superviseSeconds?: number } = {},
  ): Promise<JobQueue> {
    const { PgBoss } = await import("pg-boss");
    const schema = opts.schema ?? "jobs";
    const boss = new PgBoss({
      connectionString: url,
      schema,
      max: opts.maxConnections ?? 3,
      application_name: "reaction-board-jobs",
      persistQueueStats: true,
      // A sent job wakes an idle worker at once (LISTEN/NOTIFY); polling is the fallback.
      useListenNotify: true,
      // How soon an attempt whose worker died is noticed (after its expireInSeconds), and how
      // fresh the counts of stats() are.
      superviseIntervalSeconds: opts.superviseSeconds ?? SUPERVISE_SECONDS,
      monitorIntervalSeconds: opts.superviseSeconds ?? SUPERVISE_SECONDS,
    });
    boss.on("error", (err) => log.error("job queue error", { err }));
    await boss.start();
    return new JobQueue(boss, log, schema);
  }

  /**
   * Creates the queue of `kind` (if it is new) and works its jobs in this process, and those still
   * waiting in any of its former names' queues that exist.
   */
  async work<T>(kind: JobKind<T>): Promise<void> {
    await this.declare(kind);
    await this.#workQueue(kind.name, kind);
    for (const former of kind.formerNames ?? []) {
      if (await this.boss.getQueue(former)) await this.#workQueue(former, kind);
    }
  }

  /** Works the jobs of queue `name` with `kind`'s handler. */
  async #workQueue<T>(name: string, kind: JobKind<T>): Promise<void> {
    this.#worked.add(name);
    await this.boss.work<T>(name, {
      pollingIntervalSeconds: POLL_SECONDS,
      notifyPollingIntervalSeconds: POLL_SECONDS,
      batchSize: 1,
      localConcurrency: kind.concurrency ?? 1,
    }, async ([job]) => {
      // A fetch already under way when the stop began still delivers its job.
      if (this.#stopping) return await this.#handBack(name, job.id, null);
      const started = performance.now();
      try {
        await kind.handler({ id: job.id, data: job.data, retryCount: job.retryCount ?? 0 });
      } catch (err) {
        // Interrupted by the stop (the caption reader closes under its job): not the job's fault.
        if (this.#stopping) return await this.#handBack(name, job.id, err);
        this.log.warn("job failed; it will be retried while tries are left", {
          queue: name,
          job: job.id,
          err,
        });
        throw err;
      }
      this.log.debug("job done", {
        queue: name,
        job: job.id,
        ms: Math.round(performance.now() - started),
      });
    });
  }

  /**
   * Puts a job taken during the stop back in the queue as it was, its try not spent, for this
   * replica's next start or another replica. The handler then returns normally, and pg-boss's
   * completion, which only applies to an active job, leaves it waiting. If the database refuses,
   * the job fails as any other (`cause`, or the refusal).
   *
   * The statement is pg-boss's own `restoreJobs` (plans.js), which its manager uses for jobs it
   * took beyond a group's limit but does not export: waiting again, with no start, so the next
   * take does not count a retry (a failed, cancelled or resumed job keeps its start and does).
   * tests/jobs_test.ts fails if an upgrade changes that.
   */
  async #handBack(name: string, id: string, cause: unknown): Promise<void> {
    try {
      await this.boss.getDb().executeSql(
        `update ${this.schema}.job
         set state = 'created', started_on = null, heartbeat_on = null, upsert_by_key = null
         where name = $1 and id = $2 and state = 'active'`,
        [name, id],
      );
    } catch (err) {
      throw cause ?? err;
    }
    this.log.info("job handed back untried: the queue is stopping", { queue: name, job: id });
  }

  /** Creates the queue of `kind` if it is new, so that jobs can be sent before it is worked. */
  async declare(kind: Omit<JobKind<unknown>, "handler">): Promise<void> {
    const existing = await this.boss.getQueue(kind.name);
    const options = {
      retryLimit: kind.retryLimit ?? 5,
      retryDelay: kind.retryDelaySeconds ?? 5,
      retryBackoff: true,
      retryDelayMax: 600,
      expireInSeconds: kind.expireInSeconds ?? 300,
      notify: true,
    };
    if (existing) await this.boss.updateQueue(kind.name, options);
    else await this.boss.createQueue(kind.name, options);
  }

  /**
   * Adds a job; with `key`, not while another job with that key waits or runs in the queue
   * (returns null then).
   */
  async send<T extends object>(
    name: string,
    data: T,
    opts: { key?: string; afterSeconds?: number } = {},
  ): Promise<string | null> {
    return await this.boss.send(name, data, {
      singletonKey: opts.key,
      startAfter: opts.afterSeconds,
    });
  }

  /** Counts of every queue (or of `names`), refreshed every `superviseSeconds`. */
  async stats(names?: string[]): Promise<QueueStats[]> {
    const queues = await this.boss.getQueues(names);
    return queues.map((q) => ({
      name: q.name,
      queued: q.queuedCount,
      active: q.activeCount,
      failed: q.failedCount,
      total: q.totalCount,
      perMinute: q.deltaSeconds ? Math.round(q.completedDelta / q.deltaSeconds * 600) / 10 : null,
    }));
  }

  /** The failed jobs of queue `name` that are still kept, newest first. */
  async failed(name: string, limit = 20): Promise<FailedJob[]> {
    const jobs = await this.boss.findJobs<unknown>(name);
    return jobs
      .filter((j) => j.state === "failed")
      .sort((a, b) => Number(b.completedOn ?? 0) - Number(a.completedOn ?? 0))
      .slice(0, limit)
      .map((j) => ({
        id: j.id,
        data: j.data,
        retryCount: j.retryCount,
        error: errorText(j.output),
      }));
  }

  /**
   * Stops taking jobs of every queue this process works; the running ones go on (`stop` waits for
   * them). For a shutdown that closes what the handlers need before `stop`: a job taken after that
   * would fail at once and spend one of its tries (at a stop during a backlog of caption readings,
   * every job the workers could take in the graceful wait failed once: "The caption reader is
   * closed"). From here on a job that a fetch already under way still delivers, and a running job
   * that fails, are handed back untried (#handBack): what fails during a stop is the stop's doing.
   */
  async stopTaking(): Promise<void> {
    this.#stopping = true;
    await Promise.all([...this.#worked].map((name) => this.boss.offWork(name, { wait: false })));
  }

  /** Stops taking jobs, waits up to `graceMs` for running ones, and closes the pool. */
  async stop(graceMs = 10_000): Promise<void> {
    await this.boss.stop({ graceful: true, timeout: graceMs, close: true });
  }
}

/** What pg-boss kept of a failed attempt's error. */
function errorText(output: unknown): string {
  if (output && typeof output === "object" && "message" in output) {
    return String((output as { message: unknown }).message);
  }
  return JSON.stringify(output ?? null);
}
