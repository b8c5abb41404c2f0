/**
 * `/me`: the signed-in account, its password, sign-out-everywhere and its API keys. Keys can read
 * `/me` but manage nothing here (api/permissions.ts).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { MAX_PASSWORD_LENGTH, SCOPES } from "../domain/accounts.ts";
import type { Services } from "../services/deps.ts";
import { AppError } from "../domain/errors.ts";
import { json } from "./images.ts";
import { accounts, guard, principal } from "./permissions.ts";
import { newRouter } from "./router.ts";
import { bearer, errorResponse } from "./schemas.ts";

/** The signed-in account. */
export const Me = z.object({
  username: z.string().openapi({ example: "alice" }),
  role: z.enum(["admin", "member"]),
  created_at: z.string().openapi({ format: "date-time" }),
}).openapi("Me");

/** An API key as its owner lists it (never the key itself). */
export const ApiKey = z.object({
  id: z.string(),
  name: z.string(),
  scopes: z.array(z.enum(SCOPES)),
  created_at: z.string().openapi({ format: "date-time" }),
  last_used_at: z.string().nullable().openapi({ format: "date-time" }),
}).openapi("ApiKey");

const NewApiKey = z.object({
  name: z.string().trim().min(1, "must not be empty").max(64, "at most 64 characters"),
  scopes: z.array(z.enum(SCOPES)).min(1, "give at least one of upload, edit, delete"),
}).strict().openapi("NewApiKey");

const PasswordChange = z.object({
  current_password: z.string().max(MAX_PASSWORD_LENGTH),
  new_password: z.string().max(MAX_PASSWORD_LENGTH),
}).strict().openapi("PasswordChange");

const keyDto = (row: {
  id: string;
  name: string;
  scopes: string[];
  created_at: Date;
  last_used_at: Date | null;
}) => ({
  id: row.id,
  name: row.name,
  scopes: row.scopes as (typeof SCOPES)[number][],
  created_at: row.created_at.toISOString(),
  last_used_at: row.last_used_at?.toISOString() ?? null,
});

const sessionOnly = errorResponse("Sent with an API key (`forbidden`)");
const notSignedIn = errorResponse("Not signed in");

/** The `/me` routes. */
export function meRoutes(services: Services) {
  const people = accounts(services);
  const app = newRouter();
  app.openapi(
    createRoute({
      method: "get",
      path: "/me",
      operationId: "getMe",
      tags: ["accounts"],
      summary: "The signed-in account",
      security: bearer,
      middleware: [guard(services, "GET /me")] as const,
      responses: { 200: { description: "The account", content: json(Me) }, 401: notSignedIn },
    }),
    async (c) => {
      c.header("Cache-Control", "no-store");
      return c.json(await people.me(principal(c)), 200);
    },
  );
  app.openapi(
    createRoute({
      method: "patch",
      path: "/me/password",
      operationId: "changePassword",
      tags: ["accounts"],
      summary: "Change the signed-in account's password (other sessions stay signed in)",
      security: bearer,
      middleware: [guard(services, "PATCH /me/password")] as const,
      request: {
        body: { content: { "application/json": { schema: PasswordChange } }, required: true },
      },
      responses: {
        204: { description: "Changed" },
        401: notSignedIn,
        403: sessionOnly,
        422: errorResponse(
          "`wrong_password` (current_password), `weak_password` (under 10 characters), or " +
            "`configured_admin` (its password is ADMIN_PASSWORD)",
        ),
      },
    }),
    async (c) => {
      const body = c.req.valid("json");
      await people.changePassword(principal(c), body.current_password, body.new_password);
      return c.body(null, 204);
    },
  );
  app.openapi(
    createRoute({
      method: "post",
      path: "/me/sign-out-everywhere",
      operationId: "signOutEverywhere",
      tags: ["accounts"],
      summary: "End every token issued to the signed-in account so far (keys stay)",
      security: bearer,
      middleware: [guard(services, "POST /me/sign-out-everywhere")] as const,
      responses: { 204: { description: "Signed out" }, 401: notSignedIn, 403: sessionOnly },
    }),
    async (c) => {
      await people.signOutEverywhere(principal(c));
      return c.body(null, 204);
    },
  );
  app.openapi(
    createRoute({
      method: "get",
      path: "/me/api-keys",
      operationId: "listApiKeys",
      tags: ["accounts"],
      summary: "The signed-in account's live API keys",
      security: bearer,
      middleware: [guard(services, "GET /me/api-keys")] as const,
      responses: {
        200: { description: "The keys, oldest first", content: json(z.array(ApiKey)) },
        401: notSignedIn,
        403: sessionOnly,
      },
    }),
    async (c) => {
      c.header("Cache-Control", "no-store");
      return c.json((await people.listApiKeys(principal(c))).map(keyDto), 200);
    },
  );
  app.openapi(
    createRoute({
      method: "post",
      path: "/me/api-keys",
      operationId: "createApiKey",
      tags: ["accounts"],
      summary: "Create an API key; the answer is the only time the key is shown",
      security: bearer,
      middleware: [guard(services, "POST /me/api-keys")] as const,
      request: {
        body: { content: { "application/json": { schema: NewApiKey } }, required: true },
      },
      responses: {
        201: {
          description: "Created",
          content: json(ApiKey.extend({
            key: z.string().openapi({ description: "`rb_` + 43 characters; shown only now" }),
          })),
        },
        401: notSignedIn,
        403: sessionOnly,
        422: errorResponse("Invalid fields, or 20 live keys already"),
      },
    }),
    async (c) => {
      const { name, scopes } = c.req.valid("json");
      const { key, row } = await people.createApiKey(principal(c), name, [...new Set(scopes)]);
      c.header("Cache-Control", "no-store");
      return c.json({ ...keyDto(row), key }, 201);
    },
  );
  app.openapi(
    createRoute({
      method: "delete",
      path: "/me/api-keys/{id}",
      operationId: "revokeApiKey",
      tags: ["accounts"],
      summary: "Revoke an API key: it stops at once",
      security: bearer,
      middleware: [guard(services, "DELETE /me/api-keys/:id")] as const,
      request: {
        params: z.object({ id: z.string().openapi({ param: { name: "id", in: "path" } }) }),
      },
      responses: {
        204: { description: "Revoked" },
        401: notSignedIn,
        403: sessionOnly,
        404: errorResponse("No such live key of yours"),
      },
    }),
    async (c) => {
      if (!await people.revokeApiKey(principal(c), c.req.valid("param").id)) {
        throw new AppError("not_found", "No such API key");
      }
      return c.body(null, 204);
    },
  );
  return app;
}
