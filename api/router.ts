/** Sub-apps of the API share one validation hook: a failed zod check is 422 with a message. */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { AppEnv } from "./env.ts";

/** Turns a failed zod validation into 422 with a readable message. */
export function validationHook(
  result: { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } },
  // deno-lint-ignore no-explicit-any
  c: any,
) {
  if (result.success) return;
  const detail = result.error!.issues
    .map((i) => (i.path.length ? `${i.path.map(String).join(".")}: ${i.message}` : i.message))
    .join("; ");
  return c.json({ detail }, 422);
}

/** A sub-app with the service's validation hook. */
export function newRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}
