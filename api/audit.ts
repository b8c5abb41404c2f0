/** `GET /audit` (admin): who changed what, newest first. */
import { createRoute, z } from "@hono/zod-openapi";
import { listAudit } from "../db/audit.ts";
import { retryRead } from "../db/client.ts";
import { AppError } from "../domain/errors.ts";
import type { Services } from "../services/deps.ts";
import { json } from "./images.ts";
import { guard } from "./permissions.ts";
import { newRouter } from "./router.ts";
import { bearer, errorResponse } from "./schemas.ts";

const AuditItem = z.object({
  at: z.string().openapi({ format: "date-time" }),
  actor: z.string(),
  via: z.string().nullable().openapi({ description: "The API key's name, when one was used" }),
  action: z.string().openapi({ example: "image.delete" }),
  target: z.string().nullable().openapi({ example: "aZ3kP9qX" }),
  detail: z.record(z.string(), z.unknown()),
}).openapi("AuditEntry");

const encode = (id: string) => btoa(`a1:${id}`).replace(/=+$/, "");
function decode(cursor: string): string {
  let text = "";
  try {
    text = atob(cursor);
  } catch { /* refused below */ }
  const m = /^a1:(\d{1,18})$/.exec(text);
  if (!m) throw new AppError("bad_cursor", "cursor: not a valid cursor");
  return m[1];
}

/** The audit route. */
export function auditRoutes(services: Services) {
  return newRouter().openapi(
    createRoute({
      method: "get",
      path: "/audit",
      operationId: "listAudit",
      tags: ["accounts"],
      summary: "The audit log, newest first",
      security: bearer,
      middleware: [guard(services, "GET /audit")] as const,
      request: {
        query: z.object({
          limit: z.coerce.number().int().min(1).max(200).default(50),
          cursor: z.string().max(64).optional(),
        }),
      },
      responses: {
        200: {
          description: "One page",
          content: json(
            z.object({ items: z.array(AuditItem), next_cursor: z.string().nullable() }),
          ),
        },
        401: errorResponse("Not signed in"),
        403: errorResponse("Not an admin, or sent with an API key (`forbidden`)"),
        422: errorResponse("Invalid query"),
      },
    }),
    async (c) => {
      const { limit, cursor } = c.req.valid("query");
      const rows = await retryRead(() =>
        listAudit(services.sql, cursor ? decode(cursor) : null, limit + 1)
      );
      const items = rows.slice(0, limit);
      c.header("Cache-Control", "no-store");
      return c.json({
        items: items.map((r) => ({
          at: r.at.toISOString(),
          actor: r.actor,
          via: r.via,
          action: r.action,
          target: r.target,
          detail: r.detail,
        })),
        next_cursor: rows.length > limit ? encode(items.at(-1)!.id) : null,
      }, 200);
    },
  );
}
