/**
 * One error vocabulary (domain/errors.ts): the API and the pages answer the same error through the
 * same table, and no handler tells errors apart by class or by name.
 */
import assert from "node:assert/strict";
import { Hono } from "hono";
import type { AppEnv } from "../api/env.ts";
import { onError } from "../api/errors.ts";
import { AppError, type ErrorCode, ERRORS, forField, problemOf } from "../domain/errors.ts";
import { buildAssets } from "../adapters/islands/build.ts";
import type { ReadModel } from "../domain/types.ts";
import { StorageError } from "../adapters/storage/mod.ts";
import { createPagesApp } from "../routes/_pages.ts";
import { fakeReadModel } from "./_fake_read_model.ts";

const ROOT = new URL("../", import.meta.url);

/**
 * What a client gets for each code, written out: the status and the body of
 * `new AppError(code, "why", { fields: { n: 1 } })`. A new code fails type checking until it has
 * its line here.
 */
const EXPECTED: Record<ErrorCode, [number, Record<string, unknown> | null]> = {
  bad_request: [400, { detail: "why" }],
  unauthorized: [401, { detail: "why" }],
  forbidden: [403, { code: "forbidden", detail: "why", n: 1 }],
  bad_signature: [401, { code: "bad_signature", detail: "why", n: 1 }],
  not_found: [404, { detail: "why" }],
  username_taken: [409, { code: "username_taken", detail: "why", n: 1 }],
  invite_used: [410, { code: "invite_used", detail: "why", n: 1 }],
  invite_expired: [410, { code: "invite_expired", detail: "why", n: 1 }],
  invalid_username: [422, { code: "invalid_username", detail: "why", n: 1 }],
  weak_password: [422, { code: "weak_password", detail: "why", n: 1 }],
  wrong_password: [422, { code: "wrong_password", detail: "why", n: 1 }],
  configured_admin: [422, { code: "configured_admin", detail: "why", n: 1 }],
  sign_in_busy: [503, { code: "sign_in_busy", detail: "why", n: 1 }],
  short_id_taken: [409, { code: "short_id_taken", detail: "why", n: 1 }],
  upload_too_large: [413, { code: "upload_too_large", detail: "why", n: 1 }],
  body_too_large: [413, { code: "body_too_large", detail: "why", n: 1 }],
  unsupported_image: [415, { code: "unsupported_image", detail: "why", n: 1 }],
  video_unsupported: [415, { code: "video_unsupported", detail: "why", n: 1 }],
  video_unreadable: [422, { code: "video_unreadable", detail: "why", n: 1 }],
  video_too_long: [422, { code: "video_too_long", detail: "why", n: 1 }],
  video_busy: [503, { code: "video_busy", detail: "why", n: 1 }],
  rendition_pending: [404, { code: "rendition_pending", detail: "why", n: 1 }],
  range_not_satisfiable: [416, null],
  invalid_field: [422, { detail: "why" }],
  invalid_tag_name: [422, { code: "invalid_tag_name", detail: "why", n: 1 }],
  too_many_tags: [422, { code: "too_many_tags", detail: "why", n: 1 }],
  too_many_pixels: [422, { code: "too_many_pixels", detail: "why", n: 1 }],
  caption_text_invalid: [422, { detail: "why" }],
  bad_cursor: [422, { detail: "why" }],
  self_merge: [422, { code: "self_merge", detail: "why", n: 1 }],
  alias_chain: [422, { code: "alias_chain", detail: "why", n: 1 }],
  alias_self: [422, { code: "alias_self", detail: "why", n: 1 }],
  alias_not_found: [404, { code: "alias_not_found", detail: "why", n: 1 }],
  implication_cycle: [422, { code: "implication_cycle", detail: "why", n: 1 }],
  implication_not_found: [404, { code: "implication_not_found", detail: "why", n: 1 }],
  tag_not_found: [404, { code: "tag_not_found", detail: "why", n: 1 }],
  name_is_alias: [422, { code: "name_is_alias", detail: "why", n: 1 }],
  not_implemented: [501, { detail: "why" }],
  rate_limited: [429, { code: "rate_limited", detail: "why", n: 1 }],
  busy: [503, { code: "busy", detail: "why", n: 1 }],
  thumbnails_busy: [503, { detail: "why" }],
  too_many_reads: [429, { code: "too_many_reads", detail: "why", n: 1 }],
  reads_busy: [503, { code: "reads_busy", detail: "why", n: 1 }],
  storage_unavailable: [503, { detail: "Storage is unavailable, try again shortly" }],
  database_unavailable: [503, { detail: "Database is unavailable, try again shortly" }],
  write_conflict: [503, { detail: "Concurrent changes conflicted, try again" }],
  internal_error: [500, { detail: "Internal server error" }],
};

Deno.test("problemOf() answers every code of the table with its status and body", () => {
  assert.deepEqual(Object.keys(ERRORS).sort(), Object.keys(EXPECTED).sort());
  for (const [code, [status, body]] of Object.entries(EXPECTED)) {
    const problem = problemOf(new AppError(code as ErrorCode, "why", { fields: { n: 1 } }));
    assert.equal(problem.status, status, code);
    assert.deepEqual(problem.body, body, code);
    assert.equal(problem.code, code);
  }
});

Deno.test("problemOf() gives the documented headers: the Bearer challenge and when to retry", () => {
  const headers = (code: ErrorCode) => problemOf(new AppError(code, "why")).headers;
  assert.deepEqual(headers("unauthorized"), { "WWW-Authenticate": "Bearer" });
  assert.deepEqual(headers("busy"), { "Retry-After": "2" });
  assert.deepEqual(headers("sign_in_busy"), { "Retry-After": "2" });
  assert.deepEqual(headers("thumbnails_busy"), { "Retry-After": "2" });
  assert.deepEqual(headers("video_busy"), { "Retry-After": "5" });
  assert.deepEqual(headers("storage_unavailable"), { "Retry-After": "5" });
  assert.deepEqual(headers("database_unavailable"), { "Retry-After": "5" });
  assert.deepEqual(headers("write_conflict"), { "Retry-After": "1" });
  assert.deepEqual(headers("too_many_tags"), {});
});

Deno.test("an unknown error is a 500 that tells the client nothing; the log gets the error", () => {
  const secret = new Error("select * from secret_table at /srv/app.ts:12");
  const problem = problemOf(secret);
  assert.equal(problem.status, 500);
  assert.deepEqual(problem.body, { detail: "Internal server error" });
  assert.deepEqual(problem.headers, {});
  assert.deepEqual(problem.log, { level: "error", message: "unhandled error", err: secret });
  assert.equal(problemOf("a string").status, 500);
  assert.equal(problemOf(null).status, 500);
});

Deno.test("failures of the database and storage are 503s whose detail stays in the log", () => {
  const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), {
    code: "ECONNREFUSED",
  });
  const terminated = Object.assign(new Error("terminating connection"), {
    severity: "FATAL",
    code: "57P01",
  });
  const syntax = Object.assign(new Error("syntax error at or near connect"), {
    severity: "ERROR",
    code: "42601",
  });
  const deadlock = Object.assign(new Error("deadlock detected"), {
    severity: "ERROR",
    code: "40P01",
  });
  const storage = new StorageError("S3 put images/x failed: 500 InternalError");
  assert.equal(problemOf(refused).code, "database_unavailable");
  assert.equal(problemOf(terminated).code, "database_unavailable");
  assert.equal(problemOf(syntax).code, "internal_error", "a server error of another class");
  assert.equal(problemOf(deadlock).code, "write_conflict");
  assert.equal(problemOf(storage).code, "storage_unavailable");
  assert.deepEqual(problemOf(storage).log, {
    level: "error",
    message: "storage unavailable",
    err: storage,
  });
  assert.ok(!JSON.stringify(problemOf(storage).body).includes("images/x"));
});

Deno.test("the direct form new AppError(status, detail) keeps the status and body it is given", () => {
  const structured = problemOf(
    new AppError(409, { code: "conflict", detail: "Already there", existing: "abc" }),
  );
  assert.equal(structured.status, 409);
  assert.deepEqual(structured.body, { code: "conflict", detail: "Already there", existing: "abc" });
  const plain = problemOf(new AppError(418, "short and stout", { headers: { "X-Tea": "1" } }));
  assert.deepEqual([plain.status, plain.body, plain.headers], [418, { detail: "short and stout" }, {
    "X-Tea": "1",
  }]);
});

Deno.test("forField() restates one code's refusal as the field's, and passes any other error", () => {
  const bad = () => {
    throw new AppError("invalid_tag_name", "Tag names cannot be empty", { fields: { n: 1 } });
  };
  assert.throws(() => forField("tags", "invalid_tag_name", bad), (e: AppError) => {
    assert.deepEqual(problemOf(e).body, {
      code: "invalid_tag_name",
      detail: "tags: Tag names cannot be empty",
      n: 1,
    });
    return true;
  });
  assert.throws(() => forField("tags", "invalid_tag_name", bad, "invalid_field"), (e: AppError) => {
    assert.deepEqual(problemOf(e).body, { detail: "tags: Tag names cannot be empty" });
    return true;
  });
  const other = new AppError("too_many_tags", "At most 50 tags are allowed");
  assert.throws(() =>
    forField("tags", "invalid_tag_name", () => {
      throw other;
    }), (e) => e === other);
  assert.equal(forField("tags", "invalid_tag_name", () => 7), 7);
});

/** The page a status of the API becomes: the not-found page, the 400 page, or the same status. */
const PAGE_STATUS: Record<number, number> = {
  400: 400,
  401: 400,
  403: 400,
  404: 404,
  409: 400,
  410: 400,
  413: 400,
  415: 400,
  416: 400,
  422: 400,
  429: 429,
  500: 500,
  501: 501,
  503: 503,
};

Deno.test("a page and the API answer the same error with the same status and Retry-After", async () => {
  const assetsDir = await Deno.makeTempDir({ prefix: "errors_test_" });
  try {
    await buildAssets({ outDir: assetsDir, writeGen: false });
    let thrown: AppError = new AppError("internal_error", "");
    const read: ReadModel = { ...fakeReadModel([]), listImages: () => Promise.reject(thrown) };
    const pages = createPagesApp({ read, assetsDir });
    const api = new Hono<AppEnv>();
    api.onError(onError);
    api.get("/api", () => {
      throw thrown;
    });
    const error = console.error;
    console.error = () => {}; // a page app alone logs 5xx to the console
    try {
      for (const [code, [status]] of Object.entries(EXPECTED)) {
        thrown = new AppError(code as ErrorCode, "why");
        const fromApi = await api.request("/api");
        const page = await pages.request("/");
        await fromApi.body?.cancel();
        const html = await page.text();
        assert.equal(fromApi.status, status, code);
        assert.equal(page.status, PAGE_STATUS[status], code);
        assert.equal(page.headers.get("Retry-After"), fromApi.headers.get("Retry-After"), code);
        assert.match(page.headers.get("Content-Type")!, /^text\/html/, code);
        assert.ok(!html.includes("why"), `${code}: the page shows no detail`);
      }
    } finally {
      console.error = error;
    }
  } finally {
    await Deno.remove(assetsDir, { recursive: true });
  }
});

/** Files of api/ and routes/ that handle requests (api/errors.ts is where errors become answers). */
async function handlerFiles(): Promise<string[]> {
  const files: string[] = [];
  for (const dir of ["api", "routes", "routes/i"]) {
    for await (const entry of Deno.readDir(new URL(dir, ROOT))) {
      const name = `${dir}/${entry.name}`;
      if (!entry.isFile || !/\.tsx?$/.test(name) || /_test\.tsx?$/.test(name)) continue;
      if (name === "api/errors.ts") continue;
      files.push(name);
    }
  }
  return files.sort();
}

Deno.test("no handler tells errors apart by class or name: the table of domain/errors.ts does", async () => {
  const files = await handlerFiles();
  assert.ok(files.includes("api/image_writes.ts") && files.includes("routes/_pages.ts"), "sanity");
  const offences: string[] = [];
  for (const file of files) {
    const lines = (await Deno.readTextFile(new URL(file, ROOT))).split("\n");
    lines.forEach((line, i) => {
      const code = line.replace(/\/\/.*$/, "");
      // `x instanceof Y`, `err.name === ...`, or a set of error names like "TagNameError".
      if (/\binstanceof\b|\b(e|err|error)\.name\b|"\w+Error"/.test(code)) {
        offences.push(`${file}:${i + 1}: ${line.trim()}`);
      }
    });
  }
  assert.deepEqual(offences, []);
});
