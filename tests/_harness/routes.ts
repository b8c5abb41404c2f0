/** The routes registered on the real API app, for tests that walk every one of them. */
import type { Hono } from "hono";
import { createApiApp } from "../../api/app.ts";
import type { Services } from "../../services/deps.ts";

/** One route: `key` is "METHOD /path", `url` its full path with `:params` filled in. */
export interface ApiRoute {
  key: string;
  method: string;
  path: string;
  url: string;
}

/** The routes of the API app built on `services`, one per method and path. */
export function apiRoutes(services: Services): ApiRoute[] {
  const seen = new Map<string, ApiRoute>();
  const { api } = createApiApp(services) as unknown as { api: Hono };
  for (const { method, path } of api.routes) {
    if (method === "ALL" && path.includes("*")) continue; // middleware, not a route
    const url = "/api/v1" + path.replace(/:[A-Za-z_]\w*(\{[^}]*\})?/g, "AbCdEfGh");
    const key = `${method} ${path}`;
    seen.set(key, { key, method: method === "ALL" ? "POST" : method, path, url });
  }
  return [...seen.values()];
}
