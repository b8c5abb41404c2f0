/** `/users` (admin): every account with its uploads, and changing a role or the disabled flag. */
import { createRoute, z } from "@hono/zod-openapi";
import { ROLES } from "../domain/accounts.ts";
import type { UserListing } from "../db/users.ts";
import type { Services } from "../services/deps.ts";
import { json } from "./images.ts";
import { accounts, guard, principal } from "./permissions.ts";
import { newRouter } from "./router.ts";
import { bearer, errorResponse } from "./schemas.ts";

/** An account as the admin lists it. */
export const User = z.object({
  username: z.string(),
  role: z.enum(ROLES),
  disabled: z.boolean(),
  created_at: z.string().openapi({ format: "date-time" }),
  uploads: z.number().int(),
}).openapi("User");

const UserChange = z.object({
  role: z.enum(ROLES).optional(),
  disabled: z.boolean().optional(),
}).strict().openapi("UserChange");

const userDto = (u: UserListing) => ({ ...u, created_at: u.created_at.toISOString() });
const adminOnly = errorResponse("Not an admin, or sent with an API key (`forbidden`)");

/** The user routes. */
export function userRoutes(services: Services) {
  const people = accounts(services);
  const app = newRouter();
  app.openapi(
    createRoute({
      method: "get",
      path: "/users",
      operationId: "listUsers",
      tags: ["accounts"],
      summary: "Every account, oldest first, with its number of uploads",
      security: bearer,
      middleware: [guard(services, "GET /users")] as const,
      responses: {
        200: { description: "The accounts", content: json(z.array(User)) },
        401: errorResponse("Not signed in"),
        403: adminOnly,
      },
    }),
    async (c) => {
      c.header("Cache-Control", "no-store");
      return c.json((await people.listUsers()).map(userDto), 200);
    },
  );
  app.openapi(
    createRoute({
      method: "patch",
      path: "/users/{username}",
      operationId: "updateUser",
      tags: ["accounts"],
      summary: "Change an account's role, or disable it (its tokens and keys stop at once)",
      security: bearer,
      middleware: [guard(services, "PATCH /users/:username")] as const,
      request: {
        params: z.object({
          username: z.string().max(64).openapi({ param: { name: "username", in: "path" } }),
        }),
        body: { content: { "application/json": { schema: UserChange } }, required: true },
      },
      responses: {
        200: { description: "The account as changed", content: json(User) },
        401: errorResponse("Not signed in"),
        403: adminOnly,
        404: errorResponse("No such account"),
        422: errorResponse("Invalid fields, or the configured admin (`configured_admin`)"),
      },
    }),
    async (c) => {
      const { username } = c.req.valid("param");
      const user = await people.updateUser(principal(c), username, c.req.valid("json"));
      return c.json(userDto(user), 200);
    },
  );
  return app;
}
