/**
 * A stand-in for the `/api/v1` app over the fake ReadModel, enough for UI tests without a
 * database: list/get/patch/delete images, tags, login (admin/secret), upload, thumbnails.
 */
import { Hono } from "hono";
import { fakeImage, fakeReadModel } from "../_fake_read_model.ts";
import { parseTagList } from "../../lib/ui.ts";

/** A 1×1 PNG. */
export const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  ),
  (c) => c.charCodeAt(0),
);

/** The fake API and its data. */
export function fakeApi(count = 120) {
  const read = fakeReadModel(
    Array.from({ length: count }, (_, i) => fakeImage(i + 1, i % 3 === 0 ? ["cat"] : ["dog"])),
  );
  const token = "test-token";
  const api = new Hono();
  const authed = (auth: string | undefined) => auth === `Bearer ${token}`;
  const unauthorized = () =>
    Response.json({ detail: "Not authenticated" }, {
      status: 401,
      headers: { "WWW-Authenticate": "Bearer" },
    });

  api.post("/auth/token", async (c) => {
    const { username, password } = await c.req.json();
    if (username === "locked") {
      return c.json({ code: "login_locked", detail: "Locked", retry_after: 900 }, 429, {
        "Retry-After": "900",
      });
    }
    if (username !== "admin" || password !== "secret") return c.json({ detail: "Bad" }, 401);
    return c.json({ access_token: token, token_type: "bearer", expires_in: 3600 });
  });
  api.get("/images", async (c) => {
    const limit = Number(c.req.query("limit") ?? 50);
    const tags = parseTagList(c.req.query("tags"));
    return c.json(await read.listImages({ tags, limit, cursor: c.req.query("cursor") }));
  });
  api.get("/tags", async (c) => {
    const sort = c.req.query("sort") === "count_desc" ? "count_desc" : "name";
    const limit = Number(c.req.query("limit") ?? 100);
    const offset = Number(c.req.query("offset") ?? 0);
    return c.json(await read.listTags({ q: c.req.query("q"), sort, limit, offset }));
  });
  api.get(
    "/images/:id/thumbnail",
    () => new Response(PNG, { headers: { "Content-Type": "image/png" } }),
  );
  api.get(
    "/images/:id/file",
    () => new Response(PNG, { headers: { "Content-Type": "image/png" } }),
  );
  api.patch("/images/:id/tags", async (c) => {
    if (!authed(c.req.header("Authorization"))) return unauthorized();
    const image = read.images.find((i) => i.short_id === c.req.param("id"));
    if (!image) return c.json({ detail: "Not found" }, 404);
    const { tags } = await c.req.json();
    image.tags = (tags as string[]).map((name) => ({ name, image_count: 1 }));
    return c.json(image);
  });
  api.delete("/images/:id", (c) => {
    if (!authed(c.req.header("Authorization"))) return unauthorized();
    const at = read.images.findIndex((i) => i.short_id === c.req.param("id"));
    if (at < 0) return c.json({ detail: "Not found" }, 404);
    read.images.splice(at, 1);
    return c.body(null, 204);
  });
  api.post("/images", async (c) => {
    if (!authed(c.req.header("Authorization"))) return unauthorized();
    const form = await c.req.formData();
    const file = form.get("file") as File;
    if (file.name.startsWith("big")) {
      return c.json({ code: "upload_too_large", detail: "Too large", max_bytes: 20971520 }, 413);
    }
    if (file.name.startsWith("bad")) return c.json({ detail: "Not a supported image" }, 415);
    if (file.name.startsWith("dup")) return c.json(read.images[0], 200);
    const image = fakeImage(10_000 + read.images.length, parseTagList(String(form.get("tags"))));
    read.images.push(image);
    return c.json(image, 201);
  });
  api.all("*", (c) => c.json({ detail: "Not found" }, 404));
  return { api, read, token };
}
