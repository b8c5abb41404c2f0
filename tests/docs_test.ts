import assert from "node:assert/strict";
import { createConfig, lintFromString } from "npm:@redocly/openapi-core@2.64.0";
import { HttpError } from "../api/errors.ts";
import { startService } from "./_harness/app.ts";

const svc = await startService();
Deno.test.afterAll(() => svc.close());

async function withDocs(value: string) {
  return await startService({ db: svc.db, s3: svc.s3, env: { API_DOCS_ENABLED: value } });
}

Deno.test("docs routes exist when API_DOCS_ENABLED is true and for an invalid value", async () => {
  for (const value of ["true", "not-a-boolean"]) {
    const { app } = await withDocs(value);
    const spec = await app.request("/openapi.json");
    assert.equal(spec.status, 200, value);
    const doc = await spec.json();
    assert.equal(doc.openapi, "3.1.0");
    for (
      const path of [
        "/auth/token",
        "/images",
        "/images/{id}",
        "/images/{id}/tags",
        "/images/{id}/file",
        "/images/{id}/thumbnail",
        "/tags",
        "/health",
      ]
    ) {
      assert.ok(doc.paths[path], `${path} is documented`);
    }
    assert.ok(doc.paths["/images"].post.security, "upload declares the bearer scheme");
    assert.ok(doc.components.securitySchemes.bearer);
    for (const page of ["/docs", "/redoc"]) {
      const res = await app.request(page);
      assert.equal(res.status, 200, page);
      const html = await res.text();
      assert.equal(/https?:\/\/(?!127)/.test(html.replace(/xmlns="[^"]*"/g, "")), false, "no CDN");
    }
    for (
      const asset of [
        "swagger-ui.css",
        "swagger-ui-bundle.js",
        "redoc.standalone.js",
        "swagger-init.js",
      ]
    ) {
      const res = await app.request(`/docs/assets/${asset}`);
      assert.equal(res.status, 200, asset);
      await res.body?.cancel();
    }
  }
});

Deno.test("/docs/assets/ serves only its own files: names inherited from Object are 404", async () => {
  for (const name of ["constructor", "__proto__", "toString", "hasOwnProperty", "nope.js"]) {
    const res = await svc.app.request(`/docs/assets/${name}`);
    assert.equal(res.status, 404, name);
    await res.body?.cancel();
  }
});

Deno.test("Swagger UI is not told to keep its own copy of the token (persistAuthorization)", async () => {
  // The served boot script, run against a stand-in SwaggerUIBundle that records its options.
  const script = await (await svc.app.request("/docs/assets/swagger-init.js")).text();
  const seen: Record<string, unknown>[] = [];
  new Function("window", "SwaggerUIBundle", script)({}, (options: Record<string, unknown>) => {
    seen.push(options);
    return {};
  });
  assert.equal(seen.length, 1);
  assert.equal(seen[0].url, "/openapi.json");
  // Swagger UI's default is false; true would keep the token in localStorage after sign-out.
  assert.equal(seen[0].persistAuthorization ?? false, false);
});

Deno.test("docs routes answer 404 when API_DOCS_ENABLED is false", async () => {
  const { app } = await withDocs("false");
  for (const path of ["/openapi.json", "/docs", "/redoc", "/docs/assets/swagger-ui.css"]) {
    const res = await app.request(path);
    assert.equal(res.status, 404, path);
    await res.body?.cancel();
  }
});

Deno.test("an error body is {detail: string}; a structured error's members sit at the top level, not under detail", async () => {
  const res = await svc.app.request("/api/v1/images/NOSUCHID");
  assert.deepEqual(await res.json(), { detail: "Image not found" });
  const unknown = await svc.app.request("/api/v1/no/such/path");
  assert.equal(unknown.status, 404);
  assert.match(unknown.headers.get("content-type")!, /json/);
  assert.deepEqual(await unknown.json(), { detail: "Not found" });

  // A handler that raises structured and unexpected errors, on the service's own error handler.
  const { createShell } = await import("../wiring/app_shell.ts");
  const { newRouter } = await import("../api/router.ts");
  const api = newRouter();
  api.get("/structured", () => {
    throw new HttpError(409, { code: "conflict", detail: "Already there", existing: "abc" });
  });
  api.get("/boom", () => {
    throw new Error("select * from secret_table where password = 'x' at /srv/app.ts:12");
  });
  const app = createShell(svc.services, { api });
  const structured = await app.request("/api/v1/structured");
  assert.equal(structured.status, 409);
  assert.deepEqual(await structured.json(), {
    code: "conflict",
    detail: "Already there",
    existing: "abc",
  });
  const boom = await app.request("/api/v1/boom", { headers: { "x-request-id": "req-123" } });
  assert.equal(boom.status, 500);
  assert.deepEqual(await boom.json(), { detail: "Internal server error" });
  const logged = svc.logs.find((l) => l.includes("secret_table"));
  assert.ok(logged, "the log gets the detail");
  assert.equal(JSON.parse(logged!).request_id, "req-123");
});

Deno.test("every request is logged as JSON with its request id, status and duration", async () => {
  const before = svc.logs.length;
  const res = await svc.app.request("/api/v1/health", { headers: { "x-request-id": "abc-42" } });
  assert.equal(res.headers.get("x-request-id"), "abc-42");
  const line = svc.logs.slice(before).map((l) => JSON.parse(l)).find((l) => l.msg === "request");
  assert.equal(line.request_id, "abc-42");
  assert.equal(line.status, 200);
  assert.equal(line.path, "/api/v1/health");
  assert.equal(typeof line.ms, "number");
});

/** Warnings of Redocly's "recommended" ruleset kept on purpose: rule and pointer, then why. */
const ACCEPTED_LINT_WARNINGS: Record<string, string> = {
  "info-license #/info": "the project declares no licence, and the document must not invent one",
  "operation-4xx-response #/paths/~1health/get/responses":
    "GET /health takes no input and answers only 200 or 503; a declared 4xx would be untrue",
};

Deno.test("the served OpenAPI document passes Redocly's recommended lint", async () => {
  const source = await (await svc.app.request("/openapi.json")).text();
  const config = await createConfig({ extends: ["recommended"] });
  const problems = await lintFromString({ source, absoluteRef: "openapi.json", config });
  const unexpected = problems
    .map((p) => ({ key: `${p.ruleId} ${p.location[0]?.pointer ?? ""}`, p }))
    .filter(({ key, p }) => p.severity === "error" || !(key in ACCEPTED_LINT_WARNINGS))
    .map(({ key, p }) => `${p.severity} ${key}: ${p.message}`);
  assert.deepEqual(unexpected, []);
});

Deno.test("every operation has its stable operationId, the names generated clients use", async () => {
  const doc = await (await svc.app.request("/openapi.json")).json();
  const ids: Record<string, string> = {};
  for (const [path, item] of Object.entries<Record<string, { operationId?: string }>>(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      ids[`${method} ${path}`] = op.operationId ?? "";
    }
  }
  assert.deepEqual(ids, {
    "post /auth/token": "createToken",
    "get /health": "getHealth",
    "get /images": "listImages",
    "post /images": "uploadImage",
    "post /images/search-by-image": "searchByImage",
    "get /images/{id}": "getImage",
    "delete /images/{id}": "deleteImage",
    "patch /images/{id}": "updateImage",
    "patch /images/{id}/tags": "updateImageTags",
    "get /images/{id}/file": "getImageFile",
    "get /images/{id}/thumbnail": "getImageThumbnail",
    "get /images/{id}/preview.jpg": "getImagePreviewJpeg",
    "get /images/{id}/thumbnail.jpg": "getImageThumbnailJpeg",
    "get /images/{id}/video.mp4": "getImageVideoMp4",
    "get /images/{id}/preview": "getImagePreview",
    "get /tags": "listTags",
    "get /images/{id}/similar": "listSimilarImages",
    "get /duplicates": "listDuplicatePairs",
    "post /images/{id}/merge-into/{other}": "mergeImage",
    "get /tags/suggest": "suggestTags",
    "patch /tags/{name}": "renameTag",
    "get /tag-aliases": "listTagAliases",
    "put /tag-aliases/{alias}": "putTagAlias",
    "delete /tag-aliases/{alias}": "deleteTagAlias",
    "get /tag-implications": "listTagImplications",
    "put /tag-implications/{tag}": "putTagImplications",
    "delete /tag-implications/{tag}": "deleteTagImplications",
    "get /oembed": "getOembed",
    "get /me": "getMe",
    "patch /me/password": "changePassword",
    "post /me/sign-out-everywhere": "signOutEverywhere",
    "get /me/api-keys": "listApiKeys",
    "post /me/api-keys": "createApiKey",
    "delete /me/api-keys/{id}": "revokeApiKey",
    "get /me/favorites": "listFavorites",
    "put /me/favorites/{id}": "addFavorite",
    "delete /me/favorites/{id}": "removeFavorite",
    "get /users": "listUsers",
    "patch /users/{username}": "updateUser",
    "post /invites": "createInvite",
    "get /invites": "listInvites",
    "delete /invites/{code}": "withdrawInvite",
    "post /invites/{code}/accept": "acceptInvite",
    "get /audit": "listAudit",
    "post /images/{id}/sends": "recordImageSend",
    "post /chat/discord": "discordInteraction",
    "post /chat/slack": "slackCommand",
    "post /chat/slack/actions": "slackAction",
    "post /chat/telegram": "telegramWebhook",
  });
});
