/** The Hono `/api/v1` app: one sub-app per resource, mounted with `route()`. */
import { OpenAPIHono } from "@hono/zod-openapi";
import type { Services } from "../lib/services.ts";
import type { AppEnv } from "./env.ts";
import { healthRoutes } from "./health.ts";
import { onError } from "./errors.ts";

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

/** The whole API, without its `/api/v1` prefix. */
export function createApiApp(services: Services) {
  const api = newRouter();
  api.openAPIRegistry.registerComponent("securitySchemes", "bearer", {
    type: "oauth2",
    description: "Sign in at POST /api/v1/auth/token; send `Authorization: Bearer <token>`.",
    flows: { password: { tokenUrl: "/api/v1/auth/token", scopes: {} } },
  });
  api.route("/", healthRoutes(services));
  api.notFound((c) => c.json({ detail: "Not found" }, 404));
  api.onError(onError);
  return api;
}
