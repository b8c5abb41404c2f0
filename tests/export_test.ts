/**
 * `deno task export` and `deno task import --restore` against real services over HTTP: the
 * export holds every original (hash-checked), a manifest and a README; a second run keeps what
 * is there and fetches what is missing or wrong; restoring it into a fresh database and bucket
 * gives the same listing: short IDs, hashes, tags, dates, captions and order.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../domain/hash.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";
import { essentials, listAll, runTool, serveOverHttp, taskArgs } from "./_harness/transfer.ts";

const source = await startService();
const sourceHttp = serveOverHttp(source);
const tmp = await Deno.makeTempDir({ prefix: "export-test-" });
Deno.test.afterAll(async () => {
  await sourceHttp.close();
  await source.close();
  await Deno.remove(tmp, { recursive: true });
});

// Images of every type, with tags, dates in the past and a page boundary of the export's
// listing (200) crossed.
const auth = await authHeader(source.app);
const formats = ["png", "jpeg", "gif", "webp", "avif"] as const;
for (let i = 0; i < 205; i++) {
  const bytes = await makeImage(formats[i % formats.length], 8 + (i % 7), 8);
  const form = new FormData();
  form.append("file", new File([bytes as BlobPart], "x.bin"));
  form.append("tags", i % 3 === 0 ? "three, every_third" : `t${i % 4}`);
  if (i % 2 === 0) form.append("created_at", new Date(Date.UTC(2020, 0, 1, 0, 0, i)).toISOString());
  // Captions of both sources, and an empty one; the rest are not recognised yet (null).
  if (i % 5 === 1) form.append("text", `caption number ${i}`);
  if (i % 5 === 1 && i % 2 === 1) form.append("text_source", "ocr");
  if (i === 3) form.append("text", "");
  const res = await source.app.request("/api/v1/images", {
    method: "POST",
    headers: auth,
    body: form,
  });
  assert.equal(res.status, 201, await res.text());
}
// One without tags.
assert.equal((await upload(source.app, auth, await makeImage("png", 9, 9))).status, 201);

const out = join(tmp, "export");
let firstExport: ReturnType<typeof runTool> | undefined;
/** The first export into `out`, run by whichever test needs it first (the order is shuffled). */
const exported = () => firstExport ??= runTool("export", [out, "--url", sourceHttp.base]);

Deno.test("an export writes every original, the manifest and a README, and resumes", async () => {
  const run = await exported();
  assert.equal(run.code, 0, run.output);
  assert.match(
    run.stdout,
    /^Summary: 206 downloaded, 0 already present \(hash checked\), 0 deleted during the export, 0 failed/m,
  );
  assert.match(run.stdout, /^progress 206\/206 images · /m);

  const listing = await listAll(sourceHttp.base);
  const lines = (await Deno.readTextFile(join(out, "manifest.jsonl"))).trimEnd().split("\n");
  assert.equal(lines.length, listing.length);
  for (const [i, line] of lines.entries()) {
    const entry = JSON.parse(line);
    const img = listing[i];
    assert.deepEqual(
      Object.keys(entry).slice(0, 8),
      ["short_id", "hash", "content_type", "size_bytes", "width", "height", "tags", "created_at"],
    );
    assert.deepEqual({ ...entry, file: undefined }, { ...essentials(img), file: undefined });
    const ext = {
      "image/png": "png",
      "image/jpeg": "jpg",
      "image/gif": "gif",
      "image/webp": "webp",
      "image/avif": "avif",
      "video/mp4": "mp4",
      "video/webm": "webm",
    }[img.content_type];
    assert.equal(entry.file, `images/${img.short_id}.${ext}`);
    assert.equal(sha256Hex(await Deno.readFile(join(out, entry.file))), img.hash);
  }
  const readme = await Deno.readTextFile(join(out, "README.txt"));
  assert.match(readme, /manifest\.jsonl/);
  assert.match(readme, /deno task import --restore/);

  // Resume: one file damaged, one missing; the rest are kept.
  const [first, second] = lines.map((l) => JSON.parse(l));
  await Deno.writeFile(join(out, first.file), new Uint8Array([1, 2, 3]));
  await Deno.remove(join(out, second.file));
  const again = await runTool("export", [out, "--url", sourceHttp.base]);
  assert.equal(again.code, 0, again.output);
  assert.match(
    again.stdout,
    /^Summary: 2 downloaded, 204 already present \(hash checked\), 0 deleted during the export, 0 failed/m,
  );
  assert.equal(sha256Hex(await Deno.readFile(join(out, first.file))), first.hash);
  assert.equal(sha256Hex(await Deno.readFile(join(out, second.file))), second.hash);
  assert.equal(await Deno.readTextFile(join(out, "manifest.jsonl")), lines.join("\n") + "\n");
});

Deno.test("import --restore into a fresh database and bucket gives the same listing", async () => {
  const target = await startService();
  const targetHttp = serveOverHttp(target);
  try {
    assert.equal((await exported()).code, 0);
    const run = await runTool("import", ["--restore", out, "--url", targetHttp.base]);
    assert.equal(run.code, 0, run.output);
    assert.match(run.stdout, /^Summary: 206 created, 0 already present \(tags merged\), 0 failed/m);
    const want = (await listAll(sourceHttp.base)).map(essentials);
    const got = (await listAll(targetHttp.base)).map(essentials);
    assert.deepEqual(got, want);
    // The bytes too.
    const sample = want[want.length - 1];
    const res = await fetch(`${targetHttp.base}/api/v1/images/${sample.short_id}/file`);
    assert.equal(sha256Hex(new Uint8Array(await res.arrayBuffer())), sample.hash);

    // A second restore finds everything present and changes nothing.
    const again = await runTool("import", ["--restore", out, "--url", targetHttp.base]);
    assert.equal(again.code, 0, again.output);
    assert.match(again.stdout, /^Summary: 0 created, 206 already present/m);
    assert.deepEqual((await listAll(targetHttp.base)).map(essentials), want);
  } finally {
    await targetHttp.close();
    await target.close();
  }
});

Deno.test("a restore reports a short ID taken by other content as failed, exit code 1", async () => {
  const target = await startService();
  const targetHttp = serveOverHttp(target);
  try {
    assert.equal((await exported()).code, 0);
    const first = JSON.parse(
      (await Deno.readTextFile(join(out, "manifest.jsonl"))).split("\n")[0],
    );
    const form = new FormData();
    form.append("file", new File([await makeImage("png", 5, 5) as BlobPart], "x.png"));
    form.append("short_id", first.short_id);
    const taken = await target.app.request("/api/v1/images", {
      method: "POST",
      headers: await authHeader(target.app),
      body: form,
    });
    assert.equal(taken.status, 201);
    const run = await runTool("import", [
      "--restore",
      out,
      "--url",
      targetHttp.base,
      "--concurrency",
      "4",
    ]);
    assert.equal(run.code, 1, run.output);
    assert.match(run.stdout, /^Summary: 205 created, 0 already present \(tags merged\), 1 failed/m);
    assert.ok(
      run.stdout.includes(`failed ${first.file} (${first.short_id}): the short ID is taken`),
      run.stdout,
    );
  } finally {
    await targetHttp.close();
    await target.close();
  }
});

Deno.test("a hostile board's listing is checked: nothing written outside the folder, each bad item reported", async () => {
  const payload = new TextEncoder().encode("the attacker's bytes");
  const hash = sha256Hex(payload);
  const image = (short_id: string, fields: Record<string, unknown> = {}) => ({
    short_id,
    hash,
    content_type: "image/png",
    size_bytes: payload.length,
    width: 1,
    height: 1,
    thumbnail_key: null,
    tags: [{ name: "t\x1b[31m", image_count: 1 }],
    file_url: "",
    thumbnail_url: "",
    text: null,
    text_source: null,
    created_at: "2026-01-01T00:00:00.000Z",
    uploaded_by: null,
    favorite_count: 0,
    ...fields,
  });
  const items = [
    image("GoodGood"),
    image("../../evil"),
    image("BadHash1", { hash: hash.toUpperCase() }),
    image("NotImage", { content_type: "text/html" }),
    image("Esc\x1b[2J1"),
    image("Denied01"),
  ];
  const board = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, (req) => {
    const path = new URL(req.url).pathname;
    if (path === "/api/v1/images") return Response.json({ items, next_cursor: null });
    if (path === "/api/v1/images/Denied01/file") {
      const detail = "\x1b]0;owned\x07no\nSummary: 99 downloaded\x1b[2K\u202e";
      return Response.json({ detail }, { status: 403 });
    }
    return new Response(payload);
  });
  const root = join(tmp, "hostile");
  const folder = join(root, "export");
  try {
    const run = await runTool("export", [folder, "--url", `http://127.0.0.1:${board.addr.port}`]);
    assert.equal(run.code, 1, run.output);
    assert.match(
      run.stdout,
      /^Summary: 1 downloaded, 0 already present \(hash checked\), 0 deleted during the export, 1 failed, 4 refused /m,
    );
    const lines = run.stdout.split("\n");
    for (
      const line of [
        `refused listed image 2: short_id "../../evil" is not 8 base62 characters`,
        `refused listed image 3: hash "${hash.toUpperCase()}" is not 64 lower-case hex digits`,
        `refused listed image 4: content_type "text/html" is not image/jpeg, image/png, ` +
        `image/gif, image/webp, image/avif, video/mp4, video/webm`,
        `refused listed image 5: short_id "Esc\\u001b[2J1" is not 8 base62 characters`,
        `failed images/Denied01.png (Denied01): ?]0;owned?no?Summary: 99 downloaded?[2K? (HTTP 403)`,
      ]
    ) assert.ok(lines.includes(line), `${line}\n---\n${run.stdout}`);
    // Nothing a terminal acts on reaches it.
    for (const ch of ["\x1b", "\x07", "\r", "\u202e"]) {
      assert.ok(!run.output.includes(ch), run.output);
    }
    assert.ok(!lines.some((l) => l.startsWith("Summary: 99")), run.stdout);

    // Only the valid image was written, inside the folder; nothing beside the folder.
    assert.deepEqual([...Deno.readDirSync(root)].map((e) => e.name), ["export"]);
    assert.deepEqual(
      [...Deno.readDirSync(join(folder, "images"))].map((e) => e.name),
      ["GoodGood.png"],
    );
    const manifest = (await Deno.readTextFile(join(folder, "manifest.jsonl"))).trim().split("\n");
    assert.deepEqual(manifest.map((l) => JSON.parse(l).short_id), ["GoodGood"]);
  } finally {
    await board.shutdown();
  }
});

Deno.test("the import and export tasks get no permission beyond the ones they use", async () => {
  // Folders and boards are named at run time, so reads, writes and the network stay open (the
  // export checks its paths itself); the environment is the tools' own variables; no
  // subprocess, FFI or system information; a missing permission fails instead of prompting.
  assert.deepEqual(await taskArgs("export"), [
    "run",
    "--no-prompt",
    "--allow-net",
    "--allow-env=IMAGEBOARD_URL,IMAGEBOARD_API_KEY",
    "--allow-read",
    "--allow-write",
    "scripts/export.ts",
  ]);
  assert.deepEqual(await taskArgs("import"), [
    "run",
    "--no-prompt",
    "--allow-net",
    "--allow-env=IMAGEBOARD_URL,IMAGEBOARD_USERNAME,IMAGEBOARD_PASSWORD,IMAGEBOARD_API_KEY",
    "--allow-read",
    "scripts/import.ts",
  ]);
});
