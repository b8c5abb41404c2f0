/** `GET /api/v1/health`: database and storage checks with short timeouts. */
import { createRoute, OpenAPIHono, z } from "@hono/zod-openapi";
import type { Services } from "../lib/services.ts";
import type { AppEnv } from "./env.ts";

const CHECK_TIMEOUT_MS = 2000;

async function withTimeout(
  fn: (signal: AbortSignal) => Promise<unknown>,
): Promise<"ok" | "unavailable"> {
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

const Health = z.object({
  status: z.enum(["ok", "unavailable"]),
  checks: z.object({
    database: z.enum(["ok", "unavailable"]),
    storage: z.enum(["ok", "unavailable"]),
  }),
}).openapi("Health");

const route = createRoute({
  method: "get",
  path: "/health",
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
export function healthRoutes(services: Pick<Services, "sql" | "store" | "log">) {
  return new OpenAPIHono<AppEnv>().openapi(route, async (c) => {
    const [database, storage] = await Promise.all([
      withTimeout(() => services.sql`select 1`.execute()),
      withTimeout((signal) => services.store.check(signal)),
    ]);
    const ok = database === "ok" && storage === "ok";
    c.header("Cache-Control", "no-store");
    return c.json(
      { status: ok ? "ok" : "unavailable", checks: { database, storage } },
      ok ? 200 : 503,
    );
  });
}
