/** `GET /api/v1/health`: database and storage checks with short timeouts. */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Services } from "../services/deps.ts";
import type { AppEnv } from "./env.ts";

const CHECK_TIMEOUT_MS = 2000;
/**
 * A result this old is refreshed ahead, in the background, and answered as is meanwhile: at most
 * one check a second, however often probed, and a steady prober never waits for one. In a burst of
 * 20 uploads on two cores, the probe that started each second's check and waited for it was the
 * slowest 1% (health p99, bench B3).
 */
const REFRESH_MS = 1000;
/** A result this young is answered as is; an older one waits for a check (QUICK_MS at most). */
const FRESH_MS = 1500;
/**
 * How long after a check starts requests wait for it before they take the last result instead.
 * Counted from the check's start, not each request's: while storage took half a second to answer
 * during a burst of uploads, every probe in that half second waited the full 10 ms.
 */
const QUICK_MS = 10;
/** The oldest last result a request may be given; past this it waits for the live check. */
const STALE_MS = 5000;

type Status = "ok" | "unavailable";
interface Checks {
  database: Status;
  storage: Status;
}

async function withTimeout(fn: (signal: AbortSignal) => Promise<unknown>): Promise<Status> {
  const ctl = new AbortController();
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      fn(ctl.signal),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timed out")), CHECK_TIMEOUT_MS);
      }),
    ]);
    return "ok";
  } catch {
    return "unavailable";
  } finally {
    clearTimeout(timer);
    ctl.abort();
  }
}

/**
 * The dependency checks, run single-flight: concurrent health requests share one check, so
 * probes never pile up on a slow database or storage, and a result younger than FRESH_MS is
 * reused (refreshed in the background once REFRESH_MS old), so a busy prober costs S3 at most one
 * request a second and waits for none. Requests that find an older result wait for a running
 * check until QUICK_MS after it started and otherwise get the last result (at most STALE_MS old):
 * under load, health answers at the speed of the service, not of its slowest dependency, while a
 * dependency that fails fast (refused, unreachable) still shows at once to a sparse prober, and
 * within a second and its check to a steady one.
 */
export class HealthChecks {
  #last: { checks: Checks; at: number } | undefined;
  #running: { checks: Promise<Checks>; since: number } | undefined;

  /** `now` is the clock the ages are read from (tests pass their own). */
  constructor(
    private readonly services: Pick<Services, "sql" | "probeSql" | "store">,
    private readonly now: () => number = Date.now,
  ) {}

  async #run(): Promise<Checks> {
    const [database, storage] = await Promise.all([
      withTimeout(() => (this.services.probeSql ?? this.services.sql)`select 1`.execute()),
      withTimeout((signal) => this.services.store.check(signal)),
    ]);
    const checks = { database, storage };
    this.#last = { checks, at: this.now() };
    return checks;
  }

  #start(): { checks: Promise<Checks>; since: number } {
    return this.#running ??= {
      checks: this.#run().finally(() => this.#running = undefined),
      since: this.now(),
    };
  }

  /** The current checks, live when they answer quickly. */
  async current(): Promise<Checks> {
    if (this.#last && this.now() - this.#last.at < FRESH_MS) {
      // #run() never rejects: each check settles to a status.
      if (this.now() - this.#last.at >= REFRESH_MS) this.#start();
      return this.#last.checks;
    }
    const running = this.#start();
    const last = this.#last;
    if (!last || this.now() - last.at > STALE_MS) return await running.checks;
    const wait = running.since + QUICK_MS - this.now();
    if (wait <= 0) return last.checks;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const quick = new Promise<undefined>((r) => {
      timer = setTimeout(() => r(undefined), wait);
    });
    try {
      return (await Promise.race([running.checks, quick])) ?? last.checks;
    } finally {
      clearTimeout(timer);
    }
  }
}

const Health = z.object({
  status: z.enum(["ok", "unavailable"]),
  checks: z.object({
    database: z.enum(["ok", "unavailable"]),
    storage: z.enum(["ok", "unavailable"]),
  }),
  details: z.object({
    video: z.enum(["off"]).openapi({
      description: "No FFmpeg (FFMPEG_PATH), so video uploads are refused with 415 " +
        "`video_unsupported`; images work either way and the status stays `ok`",
    }),
  }).optional().openapi({
    description: "Only when this instance lacks something: absent when all works",
  }),
}).openapi("Health");

const route = createRoute({
  method: "get",
  path: "/health",
  operationId: "getHealth",
  tags: ["health"],
  summary: "Service health, used by container health checks",
  responses: {
    200: { description: "Everything answers", content: { "application/json": { schema: Health } } },
    503: {
      description: "A dependency is down; the failing check is named",
      content: { "application/json": { schema: Health } },
    },
  },
});

/** The health route. */
export function healthRoutes(
  services: Pick<Services, "sql" | "probeSql" | "store" | "log" | "video">,
) {
  const checks = new HealthChecks(services);
  // Known at start: FFmpeg is looked for once (adapters/video/open.ts). Only a board without it
  // says so: with it (and on the reader, which uploads nothing) the answer keeps the documented
  // shape, `{"status","checks"}` (docs/api.md), which health checks and clients compare whole.
  const details = services.video === undefined || services.video
    ? {}
    : { details: { video: "off" as const } };
  return new OpenAPIHono<AppEnv>().openapi(route, async (c) => {
    const { database, storage } = await checks.current();
    const ok = database === "ok" && storage === "ok";
    c.header("Cache-Control", "no-store");
    return c.json(
      { status: ok ? "ok" : "unavailable", checks: { database, storage }, ...details },
      ok ? 200 : 503,
    );
  });
}
