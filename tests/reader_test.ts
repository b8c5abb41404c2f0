/**
 * The edge reader (reader.ts): its module graph stays free of the write path, and a spawned
 * reader with exactly the documented permissions serves the public side of a real service.
 */
import assert from "node:assert/strict";
import { fileURLToPath as fromFileUrl } from "node:url";
import { buildAssets } from "../adapters/islands/build.ts";
import { makeThumbnail } from "../adapters/thumbnails/make_thumbnail.ts";
import { startService } from "./_harness/app.ts";
import {
  boundPort,
  type Child,
  hostEnv,
  spawnChild,
  storageEnv,
  waitReady,
} from "./_harness/child.ts";
import { authHeader, makeImage, randomTag, upload } from "./_harness/images.ts";

const ROOT = fromFileUrl(new URL("../", import.meta.url));
const READER = `${ROOT}reader.ts`;
const BUILD_DIR = `${ROOT}_build`;

/**
 * The reader's permissions, exactly as the README ("Deployment") gives them. `--no-prompt`: without
 * S3 keys, the AWS credential chain tries to read ~/.aws/config (and swallows the denial); on a
 * terminal Deno would ask instead.
 */
const READER_FLAGS = [
  "--no-prompt",
  "--allow-net",
  "--allow-env",
  `--allow-read=${BUILD_DIR}`,
];

const FORBIDDEN = [
  "adapters/thumbnails/",
  "services/upload/ingest.ts",
  "adapters/http/multipart.ts",
  "api/image_writes.ts",
  "api/upload_body.ts",
  "api/auth.ts",
  "api/docs.ts",
  "services/migrate.ts",
  "db/schema_migrations.ts",
  "adapters/embedded_postgres/",
  "wiring/resources.ts",
  "wiring/write_side.ts",
  "wiring/app.ts",
  "adapters/storage/fs.ts",
  "adapters/islands/build.ts",
  "sharp",
  "esbuild",
];

interface InfoJson {
  modules: { specifier: string; npmPackage?: string }[];
  npmPackages: Record<string, { name: string; dependencies?: string[] }>;
}

/** Every local module and every npm package (transitively) that reader.ts loads. */
async function readerGraph(): Promise<{ files: string[]; packages: string[] }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", READER],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.ok(out.success, new TextDecoder().decode(out.stderr));
  const info = JSON.parse(new TextDecoder().decode(out.stdout)) as InfoJson;
  const files = info.modules.map((m) => m.specifier).filter((s) => s.startsWith("file:"))
    .map((s) => fromFileUrl(s).slice(ROOT.length));
  // npmPackages holds the whole lockfile snapshot: walk from the packages the graph imports.
  const seen = new Set<string>();
  const visit = (id: string) => {
    if (seen.has(id)) return;
    seen.add(id);
    for (const dep of info.npmPackages[id]?.dependencies ?? []) visit(dep);
  };
  for (const m of info.modules) if (m.npmPackage) visit(m.npmPackage);
  const packages = [...seen].map((id) => info.npmPackages[id]?.name ?? id);
  return { files, packages };
}

Deno.test("reader.ts loads none of the write path, the embedded database, migrations or the build", async () => {
  const { files, packages } = await readerGraph();
  assert.ok(files.includes("api/read_api.ts") && files.includes("routes/_pages.ts"), "sanity");
  assert.ok(files.includes("vendor/postgres/src/index.js"), "sanity: postgres.js, vendored");
  assert.ok(files.includes("adapters/storage/s3.ts"), "sanity");
  assert.ok(files.includes("wiring/service.ts"), "sanity: built by the one wiring function");
  for (const bad of FORBIDDEN) {
    const hits = [
      ...files.filter((f) => f.startsWith(bad)),
      ...packages.filter((p) => p === bad || p.startsWith(`${bad}/`) || p.startsWith(`@${bad}/`)),
    ];
    assert.deepEqual(hits, [], `reader.ts must not load ${bad}`);
  }
  // sharp's and esbuild's native parts live in scoped packages (@img/sharp-*, @esbuild/*).
  assert.deepEqual(packages.filter((p) => /^@(img|esbuild|embedded-postgres)\//.test(p)), []);
});

Deno.test("the reader task runs reader.ts with the same permissions as this test", async () => {
  const { tasks } = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const flags = READER_FLAGS.map((f) => f.replace(BUILD_DIR, "_build"));
  assert.equal(tasks.reader, `deno run ${flags.join(" ")} reader.ts`);
});

async function ensureBuilt() {
  try {
    await Deno.stat(`${BUILD_DIR}/manifest.json`);
  } catch {
    await buildAssets({});
  }
}

Deno.test("a spawned reader with only net, env and read of _build serves the public side", async () => {
  await ensureBuilt();
  const svc = await startService({ thumbnails: { thumbnail: (b) => makeThumbnail(b) } });
  let child: Child | undefined;
  try {
    const auth = await authHeader(svc.app);
    const tag = randomTag();
    const bytes = await makeImage("png", 320, 200);
    const created = await upload(svc.app, auth, bytes, [tag]);
    assert.equal(created.status, 201, await created.clone().text());
    const img = await created.json();

    const started = performance.now();
    child = spawnChild({
      args: ["run", ...READER_FLAGS, READER],
      env: {
        ...hostEnv(),
        ...storageEnv(svc.db, svc.s3),
        PORT: "0",
        HOST: "127.0.0.1",
        LOG_LEVEL: "warn",
      },
    });
    const base = `http://127.0.0.1:${await boundPort(child, 30_000)}`;

    // Cold start: spawn to the first 200 on `/` (a rendered page from the database).
    await waitReady(child, `${base}/`, { timeoutMs: 30_000, intervalMs: 10 });
    const coldMs = performance.now() - started;
    console.log(`reader cold start (spawn -> first 200 on /): ${Math.round(coldMs)} ms`);

    const health = await fetch(`${base}/api/v1/health`);
    assert.equal(health.status, 200, await health.clone().text());
    assert.deepEqual(await health.json(), {
      status: "ok",
      checks: { database: "ok", storage: "ok" },
    });

    const page = async (path: string, status: number) => {
      const res = await fetch(`${base}${path}`);
      assert.equal(res.status, status, path);
      assert.match(res.headers.get("content-type") ?? "", /^text\/html/, path);
      return await res.text();
    };
    assert.match(await page("/", 200), new RegExp(img.short_id));
    assert.match(await page("/tags", 200), new RegExp(tag));
    assert.match(await page(`/i/${img.short_id}`, 200), new RegExp(tag));
    await page("/nope", 404);

    const list = await fetch(`${base}/api/v1/images`);
    assert.equal(list.status, 200);
    assert.match(list.headers.get("content-type") ?? "", /^application\/json/);
    const { items } = await list.json();
    assert.deepEqual(items.map((i: { short_id: string }) => i.short_id), [img.short_id]);

    const file = await fetch(`${base}/api/v1/images/${img.short_id}/file`);
    assert.equal(file.status, 200);
    assert.deepEqual(new Uint8Array(await file.arrayBuffer()), bytes);

    // Sharing is a read: direct links, link previews and oEmbed.
    const direct = await fetch(`${base}/${img.short_id}.png`);
    assert.equal(direct.status, 200);
    assert.equal(direct.headers.get("content-type"), "image/png");
    assert.equal(direct.headers.get("etag"), `"${img.hash}"`);
    assert.deepEqual(new Uint8Array(await direct.arrayBuffer()), bytes);
    const part = await fetch(`${base}/${img.short_id}.png`, { headers: { range: "bytes=0-3" } });
    assert.equal(part.status, 206);
    assert.deepEqual(new Uint8Array(await part.arrayBuffer()), bytes.slice(0, 4));
    const detail = await page(`/i/${img.short_id}`, 200);
    assert.match(
      detail,
      new RegExp(`<meta property="og:image" content="${base}/${img.short_id}\\.png">`),
    );
    assert.match(detail, /<link rel="alternate" type="application\/json\+oembed"/);
    const oembed = await fetch(
      `${base}/api/v1/oembed?url=${encodeURIComponent(`${base}/i/${img.short_id}`)}&maxwidth=160`,
    );
    assert.equal(oembed.status, 200);
    const photo = await oembed.json();
    assert.deepEqual(
      [photo.type, photo.url, photo.width, photo.height],
      ["photo", `${base}/${img.short_id}.png`, 160, 100],
    );

    const thumb = await fetch(`${base}/api/v1/images/${img.short_id}/thumbnail`);
    assert.equal(thumb.status, 200);
    assert.equal(thumb.headers.get("content-type"), "image/webp");
    assert.ok((await thumb.arrayBuffer()).byteLength > 0);

    const css = await fetch(`${base}${
      JSON.parse(
        await Deno.readTextFile(
          `${BUILD_DIR}/manifest.json`,
        ),
      ).css
    }`);
    assert.equal(css.status, 200, "hashed assets are served from _build/static");
    await css.body?.cancel();

    // The write side and sign-in are absent.
    const refused = async (method: string, path: string, init: RequestInit = {}) => {
      const res = await fetch(`${base}${path}`, { method, ...init });
      assert.ok([404, 405].includes(res.status), `${method} ${path} answered ${res.status}`);
      await res.body?.cancel();
    };
    await refused("POST", "/api/v1/images", { headers: auth, body: new FormData() });
    await refused("DELETE", `/api/v1/images/${img.short_id}`, { headers: auth });
    await refused("PATCH", `/api/v1/images/${img.short_id}/tags`, {
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ tags: ["x"] }),
    });
    await refused("POST", "/api/v1/auth/token", {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: "correct horse battery staple" }),
    });
    // No API docs either.
    for (const path of ["/docs", "/redoc", "/openapi.json", "/docs/assets/swagger-init.js"]) {
      await refused("GET", path);
    }
    // Nothing was deleted behind the refusals.
    assert.equal((await svc.app.request(`/api/v1/images/${img.short_id}`)).status, 200);
  } finally {
    if (child) {
      const status = await child.stop();
      if (!status.success) console.error(`reader exited ${status.code}\n${child.output()}`);
      assert.equal(status.code, 0, "the reader stops cleanly on SIGTERM");
      assert.doesNotMatch(child.stderr(), /NotCapable|PermissionDenied|Requires .* access/);
    }
    await svc.close();
  }
});

Deno.test("the reader refuses to start without DATABASE_URL and S3_BUCKET, naming them", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", ...READER_FLAGS, READER],
    cwd: ROOT,
    clearEnv: true,
    env: hostEnv(),
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 1);
  const stderr = new TextDecoder().decode(out.stderr);
  assert.match(stderr, /DATABASE_URL and S3_BUCKET/);
  assert.doesNotMatch(stderr, /at .*\.ts:\d+/, "a message, not a stack trace");
});
