/**
 * `deno task import` against a real service over HTTP: a generated folder tree with sub-folders,
 * sidecars, non-images, a duplicate, a hidden file and an unreadable file gives the right counts,
 * tags and exit code in the non-terminal output; a rerun changes nothing; `--dry-run` and
 * `--no-folder-tags` do what they say; an import killed half-way completes on a rerun.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { sha256Hex } from "../domain/hash.ts";
import { startService, TEST_PASSWORD } from "./_harness/app.ts";
import { makeImage } from "./_harness/images.ts";
import { makeVideo } from "./_harness/videos.ts";
import { essentials, listAll, runTool, serveOverHttp } from "./_harness/transfer.ts";

const svc = await startService();
const http = serveOverHttp(svc);
const tmp = await Deno.makeTempDir({ prefix: "import-test-" });
Deno.test.afterAll(async () => {
  await http.close();
  await svc.close();
  await Deno.remove(tmp, { recursive: true });
});

async function write(root: string, rel: string, data: Uint8Array | string) {
  await Deno.mkdir(join(root, rel, ".."), { recursive: true });
  if (typeof data === "string") await Deno.writeTextFile(join(root, rel), data);
  else await Deno.writeFile(join(root, rel), data);
}

/** Tags of each image of the board by content hash. */
async function tagsByHash(): Promise<Map<string, string[]>> {
  return new Map((await listAll(http.base)).map((i) => [i.hash, i.tags.map((t) => t.name).sort()]));
}

/**
 * The content hashes on the board once it holds still. An upload whose body was sent before its
 * importer was killed or interrupted still lands, after the client is gone (CI saw one land after
 * a listing, and one counted as new by the next test of the file).
 */
async function settledHashes(): Promise<Set<string>> {
  let have = new Set<string>();
  for (let tries = 0; tries < 50; tries++) {
    const now = new Set((await listAll(http.base)).map((i) => i.hash));
    if (tries > 0 && now.size === have.size) break;
    have = now;
    await new Promise((r) => setTimeout(r, 300));
  }
  return have;
}

/** The summary's count line. */
const summaryLine = (stdout: string) => stdout.split("\n").find((l) => l.startsWith("Summary: "));

// A tree of 9 entries: 5 images (one a copy of another), 3 to skip, 1 unreadable.
const tree = join(tmp, "reactions");
const a = await makeImage("png", 40, 30);
const b = await makeImage("jpeg", 30, 40);
const c = await makeImage("gif", 20, 20);
const top = await makeImage("webp", 25, 25);
await write(tree, "cats/happy/a.png", a);
await write(tree, "cats/happy/a.png.txt", "Sunny, warm\nfluffy\n");
await write(tree, "cats/b.jpg", b);
await write(tree, "cats/b.txt", "grumpy");
await write(tree, "dogs/c.gif", c);
await write(tree, "dogs/c copy.gif", c);
await write(tree, "top.webp", top);
await write(tree, "notes.txt", "not a sidecar of anything");
await write(tree, "fake.png", "plain text with an image's name");
await write(tree, ".hidden.png", a);
await Deno.symlink(join(tree, "gone.png"), join(tree, "broken.png"));

Deno.test("an import tags by folder, sidecar and --tags, and reports every file", async () => {
  // The file's other tests upload to the same board: count what this run adds.
  const imagesBefore = (await tagsByHash()).size;
  const run = await runTool("import", [tree, "--url", http.base, "--tags", "Import Batch"]);
  assert.equal(run.code, 1, `one file failed, so the exit code is 1:\n${run.output}`);
  assert.match(
    summaryLine(run.stdout) ?? "",
    /^Summary: 4 created, 1 already present \(tags merged\), 3 skipped, 1 failed in /,
    run.output,
  );
  // The plain form: one line per file, progress lines, the summary's lists.
  const lines = run.stdout.split("\n");
  assert.ok(
    lines.some((l) =>
      /^created cats\/happy\/a\.png -> [0-9A-Za-z]{8} \[import_batch, cats, happy, sunny, warm, fluffy\]$/
        .test(l)
    ),
    run.stdout,
  );
  assert.ok(lines.includes("skipped .hidden.png: hidden file"), run.stdout);
  assert.ok(
    lines.includes(
      "skipped fake.png: not a supported image or video (JPEG, PNG, GIF, WebP, AVIF, MP4 or WebM)",
    ),
    run.stdout,
  );
  assert.ok(lines.some((l) => l.startsWith("skipped notes.txt: not a supported image")));
  assert.ok(lines.some((l) => /^failed broken\.png: cannot read: /.test(l)), run.stdout);
  assert.ok(!lines.some((l) => l.includes("a.png.txt") || l.includes("b.txt")), "sidecars");
  const progress = lines.filter((l) => l.startsWith("progress "));
  assert.ok(progress.length >= 2, run.stdout);
  assert.match(progress.at(-1)!, /^progress 9\/9 files · .* files\/s · 1 failed$/);
  assert.ok(lines.includes("failed (1):") && lines.includes("skipped (3):"), run.stdout);

  const tags = await tagsByHash();
  assert.equal(
    tags.size - imagesBefore,
    4,
    "four new images: the copy and the skipped files added none",
  );
  assert.deepEqual(tags.get(sha256Hex(a)), [
    "cats",
    "fluffy",
    "happy",
    "import_batch",
    "sunny",
    "warm",
  ]);
  assert.deepEqual(tags.get(sha256Hex(b)), ["cats", "grumpy", "import_batch"]);
  assert.deepEqual(tags.get(sha256Hex(c)), ["dogs", "import_batch"]);
  assert.deepEqual(tags.get(sha256Hex(top)), ["import_batch"]);

  // A rerun changes nothing: every image is already there, with the same tags.
  const before = (await listAll(http.base)).map(essentials);
  const again = await runTool("import", [tree, "--url", http.base, "--tags", "import batch"]);
  assert.equal(again.code, 1, again.output);
  assert.match(
    summaryLine(again.stdout) ?? "",
    /^Summary: 0 created, 5 already present \(tags merged\), 3 skipped, 1 failed/,
  );
  assert.deepEqual((await listAll(http.base)).map(essentials), before);
});

/** `mp4` padded past the importer's sniffed head with a trailing `free` box: still a whole MP4. */
function paddedMp4(mp4: Uint8Array, bytes: number): Uint8Array {
  const out = new Uint8Array(mp4.length + bytes);
  out.set(mp4);
  new DataView(out.buffer).setUint32(mp4.length, bytes);
  out.set(new TextEncoder().encode("free"), mp4.length + 4);
  return out;
}

Deno.test("an import sends MP4, WebM and GIF files as it sends images (issue 45)", async () => {
  const root = join(tmp, "moving");
  const clip = await makeVideo("mp4_sound");
  // Larger than the head the importer sniffs (SNIFF_BYTES): recognised from its head alone.
  const big = paddedMp4(await makeVideo("mp4"), 700_000);
  const reel = await makeVideo("webm");
  const loop = await makeVideo("gif");
  await write(root, "clips/clip.mp4", clip);
  await write(root, "clips/clip.mp4.txt", "laughing");
  await write(root, "clips/big.mp4", big);
  await write(root, "reel.webm", reel);
  await write(root, "loop.gif", loop);
  await write(root, "fake.mp4", "a text file with a video's name");

  const dry = await runTool("import", [root, "--url", http.base, "--dry-run"], {
    env: { IMAGEBOARD_PASSWORD: "" },
  });
  assert.equal(dry.code, 0, dry.output);
  assert.match(summaryLine(dry.stdout) ?? "", /^Summary: 4 would be sent, 1 skipped, 0 failed/);
  assert.ok(dry.stdout.includes("would send clips/big.mp4 [clips]"), dry.stdout);

  const run = await runTool("import", [root, "--url", http.base]);
  assert.equal(run.code, 0, run.output);
  assert.match(
    summaryLine(run.stdout) ?? "",
    /^Summary: 4 created, 0 already present .*, 1 skipped/,
  );
  assert.ok(
    run.stdout.split("\n").includes(
      "skipped fake.mp4: not a supported image or video (JPEG, PNG, GIF, WebP, AVIF, MP4 or WebM)",
    ),
    run.stdout,
  );
  const byHash = new Map((await listAll(http.base)).map((i) => [i.hash, i]));
  const got = (bytes: Uint8Array) => {
    const image = byHash.get(sha256Hex(bytes));
    return image && [image.content_type, image.tags.map((t) => t.name).sort()];
  };
  assert.deepEqual(got(clip), ["video/mp4", ["clips", "laughing"]]);
  assert.deepEqual(got(big), ["video/mp4", ["clips"]]);
  assert.deepEqual(got(reel), ["video/webm", []]);
  assert.deepEqual(got(loop), ["image/gif", []]);
});

Deno.test("--dry-run sends nothing and lists the tags; --no-folder-tags leaves folder names out", async () => {
  const root = join(tmp, "dry");
  const img = await makeImage("png", 10, 10);
  await write(root, "mood/x.png", img);
  await write(root, "mood/x.txt", "sidecar_tag");
  // Its own file, looked up by hash: an import another test killed may still finish an upload.
  assert.equal((await tagsByHash()).has(sha256Hex(img)), false, "a new image");
  const dry = await runTool("import", [root, "--url", http.base, "--dry-run"], {
    env: { IMAGEBOARD_PASSWORD: "" },
  });
  assert.equal(dry.code, 0, dry.output);
  assert.ok(dry.stdout.includes("would send mood/x.png [mood, sidecar_tag]"), dry.stdout);
  assert.match(summaryLine(dry.stdout) ?? "", /^Summary: 1 would be sent, 0 skipped, 0 failed/);
  assert.equal((await tagsByHash()).has(sha256Hex(img)), false, "a dry run uploads nothing");

  // The credential from the command line this time.
  const run = await runTool("import", [
    root,
    "--url",
    http.base,
    "--no-folder-tags",
    "--username",
    "admin",
    "--password",
    TEST_PASSWORD,
  ], { env: { IMAGEBOARD_PASSWORD: "" } });
  assert.equal(run.code, 0, run.output);
  assert.deepEqual((await tagsByHash()).get(sha256Hex(img)), ["sidecar_tag"]);
});

Deno.test("a wrong password stops the import before anything is sent, with exit code 2", async () => {
  const root = join(tmp, "denied");
  await write(root, "x.png", await makeImage("png", 10, 10));
  const run = await runTool("import", [root, "--url", http.base], {
    env: { IMAGEBOARD_PASSWORD: "not the password" },
  });
  assert.equal(run.code, 2, run.output);
  assert.match(run.output, /error: .*HTTP 401/);
});

Deno.test("an import killed half-way completes on a rerun", async () => {
  const root = join(tmp, "interrupted");
  const hashes: string[] = [];
  for (let i = 0; i < 30; i++) {
    const img = await makeImage("png", 16, 16);
    hashes.push(sha256Hex(img));
    await write(root, `batch/${String(i).padStart(2, "0")}.png`, img);
  }
  let created = 0;
  const first = await runTool("import", [root, "--url", http.base, "--concurrency", "1"], {
    onLine: (line, kill) => {
      if (line.startsWith("created ") && ++created === 10) kill();
    },
  });
  assert.equal(first.signal, "SIGKILL", first.output);
  const have = await settledHashes();
  const missing = hashes.filter((h) => !have.has(h));
  assert.ok(missing.length > 0 && missing.length <= 20, `killed half-way: ${missing.length}`);

  const rerun = await runTool("import", [root, "--url", http.base]);
  assert.equal(rerun.code, 0, rerun.output);
  const m = /^Summary: (\d+) created, (\d+) already present/.exec(summaryLine(rerun.stdout) ?? "");
  assert.ok(m, rerun.stdout);
  assert.equal(Number(m[1]), missing.length);
  assert.equal(Number(m[1]) + Number(m[2]), 30);
  const after = await tagsByHash();
  for (const h of hashes) assert.deepEqual(after.get(h), ["batch"]);
});

Deno.test("Ctrl-C half-way prints the summary so far and exits with 130", async () => {
  const root = join(tmp, "ctrl-c");
  for (let i = 0; i < 20; i++) {
    await write(root, `${String(i).padStart(2, "0")}.png`, await makeImage("png", 12, 12));
  }
  let created = 0;
  const run = await runTool("import", [root, "--url", http.base, "--concurrency", "1"], {
    onLine: (line, kill) => {
      if (line.startsWith("created ") && ++created === 5) kill("SIGINT");
    },
  });
  assert.equal(run.code, 130, run.output);
  const lines = run.stdout.split("\n");
  const at = lines.findIndex((l) => l.startsWith("Interrupted: the summary so far"));
  assert.ok(at >= 0, run.stdout);
  const m = /^Summary: (\d+) created, 0 already present \(tags merged\), 0 skipped, 0 failed/
    .exec(lines[at + 1]);
  assert.ok(m && Number(m[1]) >= 5 && Number(m[1]) < 20, run.stdout);
  // An upload in flight at the interrupt lands late: not in the next test's count.
  await settledHashes();
});

Deno.test("a symbolic link out of the folder is skipped and reported; one inside still works", async () => {
  // A pack whose links point at the importer's own files: a picture and a text file.
  const outside = join(tmp, "private");
  const secret = await makeImage("png", 13, 11);
  await write(outside, "private.png", secret);
  await write(outside, "words.txt", "secretword");
  const root = join(tmp, "pack");
  const inside = await makeImage("png", 14, 11);
  const plain = await makeImage("png", 15, 11);
  await write(root, "real/inside.png", inside);
  await write(root, "cats/plain.png", plain);
  await Deno.symlink(join(outside, "private.png"), join(root, "cats/funny.png"));
  await Deno.symlink(join(outside, "words.txt"), join(root, "cats/plain.png.txt"));
  await Deno.symlink("../real/inside.png", join(root, "cats/linked.png"));
  await Deno.symlink(outside, join(root, "elsewhere"));

  const run = await runTool("import", [root, "--url", http.base]);
  assert.equal(run.code, 0, run.output);
  const lines = run.stdout.split("\n");
  for (
    const line of [
      "skipped cats/funny.png: symbolic link out of the folder (not followed)",
      "skipped cats/plain.png.txt: symbolic link out of the folder (not followed)",
      "skipped elsewhere: symbolic link out of the folder (not followed)",
    ]
  ) assert.ok(lines.includes(line), `${line}\n---\n${run.stdout}`);
  assert.ok(
    lines.some((l) => /^(created|present) cats\/linked\.png -> [0-9A-Za-z]{8} \[cats\]$/.test(l)),
  );
  const tags = await tagsByHash();
  assert.equal(tags.has(sha256Hex(secret)), false, "the private picture is not uploaded");
  assert.deepEqual(tags.get(sha256Hex(plain)), ["cats"], "the linked sidecar's words are not sent");
  assert.deepEqual(tags.get(sha256Hex(inside)), ["cats", "real"]);
});
