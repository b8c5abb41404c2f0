/**
 * The tag rules' write routes, all behind requireAuth: creating and removing aliases and
 * implications, and renaming or merging tags (`PATCH /tags/{name}`). Kept apart from the read
 * routes, like image_writes.ts, so the edge reader serves none of them.
 */
import { createRoute, z } from "@hono/zod-openapi";
import {
  deleteAlias,
  deleteImplications,
  putAlias,
  putImplications,
  renameTag,
} from "../db/tag_rules.ts";
import type { Services } from "../services/deps.ts";
import { MAX_TAGS_PER_IMAGE } from "../domain/tag_names.ts";
import { scheduleImplications } from "../services/tags/implications.ts";
import { TagRuleError } from "../domain/tag_rule_errors.ts";
import { json } from "./images.ts";
import { guard, principal } from "./permissions.ts";
import { recordAudit } from "../services/audit.ts";
import { newRouter } from "./router.ts";
import { bearer, errorResponse, Tag } from "./schemas.ts";
import { nameOrThrow, nameParam, refusals, TagAlias, TagImplication } from "./tag_rules.ts";

/** Creating and removing aliases and implications, and renaming or merging tags. */
export function tagRuleWriteRoutes(services: Services) {
  const { sql } = services;
  const app = newRouter();
  const apply = async (tagId: string | null) => {
    if (tagId !== null) await scheduleImplications(services, tagId);
  };

  app.openapi(
    createRoute({
      method: "put",
      path: "/tag-aliases/{alias}",
      operationId: "putTagAlias",
      tags: ["tags"],
      summary: "Make a name always mean another tag; a tag of that name merges into the target",
      security: bearer,
      middleware: [guard(services, "PUT /tag-aliases/:alias")] as const,
      request: {
        params: nameParam("alias", "lol"),
        body: {
          content: { "application/json": { schema: z.object({ target: z.string() }).strict() } },
          required: true,
        },
      },
      responses: {
        201: { description: "Created", content: json(TagAlias) },
        200: {
          description: "Already there, or pointed at the new target",
          content: json(TagAlias),
        },
        ...refusals(
          "Invalid name (`invalid_tag_name`), alias of itself (`alias_self`), a chain " +
            "(`alias_chain`), or a merge that makes an implication cycle (`implication_cycle`)",
        ),
      },
    }),
    async (c) => {
      const alias = nameOrThrow("alias", c.req.valid("param").alias);
      const target = nameOrThrow("target", c.req.valid("json").target);
      if (alias === target) {
        throw new TagRuleError("alias_self", `"${alias}" cannot be an alias of itself`);
      }
      const done = await putAlias(sql, alias, target);
      await recordAudit(sql, principal(c), "tag_alias.put", alias, { target });
      await apply(done.applyTo);
      return c.json({ alias, target }, done.created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/tag-aliases/{alias}",
      operationId: "deleteTagAlias",
      tags: ["tags"],
      summary: "Remove an alias; the name becomes free for a plain tag again",
      security: bearer,
      middleware: [guard(services, "DELETE /tag-aliases/:alias")] as const,
      request: { params: nameParam("alias", "lol") },
      responses: {
        204: { description: "Removed" },
        401: errorResponse("Not signed in"),
        403: errorResponse("Not an admin, or a key without `edit` (`forbidden`)"),
        404: errorResponse("No such alias (`code`: `alias_not_found`)"),
        422: errorResponse("Invalid name (`code`: `invalid_tag_name`)"),
      },
    }),
    async (c) => {
      const alias = nameOrThrow("alias", c.req.valid("param").alias);
      if (!await deleteAlias(sql, alias)) {
        throw new TagRuleError("alias_not_found", `There is no alias "${alias}"`);
      }
      await recordAudit(sql, principal(c), "tag_alias.delete", alias);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: "put",
      path: "/tag-implications/{tag}",
      operationId: "putTagImplications",
      tags: ["tags"],
      summary: "Set what a tag implies; its images get the implied tags in the background",
      security: bearer,
      middleware: [guard(services, "PUT /tag-implications/:tag")] as const,
      request: {
        params: nameParam("tag", "facepalm"),
        body: {
          content: {
            "application/json": {
              schema: z.object({ implies: z.array(z.string()).max(MAX_TAGS_PER_IMAGE) }).strict(),
            },
          },
          required: true,
        },
      },
      responses: {
        201: { description: "Set (the tag implied nothing before)", content: json(TagImplication) },
        200: { description: "Replaced the tag's implications", content: json(TagImplication) },
        ...refusals("Invalid name (`invalid_tag_name`) or a cycle (`implication_cycle`)"),
      },
    }),
    async (c) => {
      const tag = nameOrThrow("tag", c.req.valid("param").tag);
      const implies = [
        ...new Set(c.req.valid("json").implies.map((n, i) => nameOrThrow(`implies.${i}`, n))),
      ];
      const done = await putImplications(sql, tag, implies);
      await recordAudit(sql, principal(c), "tag_implication.put", done.tag, {
        implies: done.implies,
      });
      await apply(done.applyTo);
      return c.json({ tag: done.tag, implies: done.implies }, done.created ? 201 : 200);
    },
  );

  app.openapi(
    createRoute({
      method: "delete",
      path: "/tag-implications/{tag}",
      operationId: "deleteTagImplications",
      tags: ["tags"],
      summary: "Remove what a tag implies (images keep the tags they were given)",
      security: bearer,
      middleware: [guard(services, "DELETE /tag-implications/:tag")] as const,
      request: { params: nameParam("tag", "facepalm") },
      responses: {
        204: { description: "Removed" },
        401: errorResponse("Not signed in"),
        403: errorResponse("Not an admin, or a key without `edit` (`forbidden`)"),
        404: errorResponse("The tag implies nothing (`code`: `implication_not_found`)"),
        422: errorResponse("Invalid name (`code`: `invalid_tag_name`)"),
      },
    }),
    async (c) => {
      const tag = nameOrThrow("tag", c.req.valid("param").tag);
      if (!await deleteImplications(sql, tag)) {
        throw new TagRuleError("implication_not_found", `"${tag}" implies nothing`);
      }
      await recordAudit(sql, principal(c), "tag_implication.delete", tag);
      return c.body(null, 204);
    },
  );

  app.openapi(
    createRoute({
      method: "patch",
      path: "/tags/{name}",
      operationId: "renameTag",
      tags: ["tags"],
      summary: "Rename a tag; renaming to an existing tag merges the two",
      security: bearer,
      middleware: [guard(services, "PATCH /tags/:name")] as const,
      request: {
        params: nameParam("name", "lol"),
        body: {
          content: { "application/json": { schema: z.object({ name: z.string() }).strict() } },
          required: true,
        },
      },
      responses: {
        200: {
          description: "The tag under its new name; `merged` when it joined an existing one",
          content: json(Tag.extend({ merged: z.boolean() })),
        },
        401: errorResponse("Not signed in"),
        403: errorResponse("Not an admin, or a key without `edit` (`forbidden`)"),
        404: errorResponse("No such tag (`code`: `tag_not_found`)"),
        413: errorResponse("Body over 64 KiB (`code`: `body_too_large`)"),
        422: errorResponse(
          "Invalid name (`invalid_tag_name`), the new name is an alias (`name_is_alias`), or " +
            "a merge that makes an implication cycle (`implication_cycle`)",
        ),
      },
    }),
    async (c) => {
      const from = nameOrThrow("name", c.req.valid("param").name);
      const to = nameOrThrow("name", c.req.valid("json").name);
      const done = await renameTag(sql, from, to);
      await recordAudit(sql, principal(c), "tag.rename", from, { to, merged: done.merged });
      await apply(done.applyTo);
      return c.json({ name: to, image_count: done.image_count, merged: done.merged }, 200);
    },
  );
  return app;
}
