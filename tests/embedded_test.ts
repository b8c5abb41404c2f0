/**
 * The embedded default: `deno task start` with no DATABASE_URL and no S3_BUCKET runs a real
 * PostgreSQL and the filesystem store under DATA_DIR, keeps its data across restarts, refuses a
 * second process on the same DATA_DIR, and shuts everything down on SIGTERM.
 */
import assert from "node:assert/strict";
import { makeImage } from "./_harness/images.ts";

const root = new URL("..", import.meta.url).pathname;
const startTask: string = JSON.parse(await Deno.readTextFile(`${root}deno.json`)).tasks.start;
const flags = startTask.split(" ").filter((a) => a.startsWith("--allow-"));

function freePort() {
  const l = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = l.addr as Deno.NetAddr;
  l.close();
  return port;
}

function start(dataDir: string, port: number) {
  const env: Record<string, string> = { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1" };
  for (const key of ["PATH", "HOME", "DENO_DIR"]) {
    const v = Deno.env.get(key);
    if (v) env[key] = v;
  }
  return new Deno.Command(Deno.execPath(), {
    args: ["run", ...flags, "main.ts"],
    cwd: root,
    env,
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

async function waitHealthy(port: number, child: Deno.ChildProcess, timeoutMs = 90_000) {
  const until = Date.now() + timeoutMs;
  let exited = false;
  child.status.then(() => exited = true);
  while (Date.now() < until && !exited) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      await res.body?.cancel();
      if (res.status === 200) return;
    } catch { /* not listening yet */ }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(
    exited ? "the service exited before it was healthy" : "the service never became healthy",
  );
}

async function stop(child: Deno.ChildProcess) {
  child.kill("SIGTERM");
  const [status, out] = await Promise.all([child.status, child.stdout.text(), child.stderr.text()]);
  return { code: status.code, out };
}

Deno.test("a fresh DATA_DIR starts, answers health, keeps its data across a restart", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "board-embedded-" });
  try {
    const port = freePort();
    const first = start(dataDir, port);
    await waitHealthy(port, first);
    const secrets = JSON.parse(await Deno.readTextFile(`${dataDir}/secrets.json`));
    assert.ok(secrets.admin_password.length >= 12);
    assert.ok(new TextEncoder().encode(secrets.jwt_secret).length >= 32);

    // A second process on the same DATA_DIR stops with a clear message.
    const second = start(dataDir, freePort());
    const [status, err] = await Promise.all([
      second.status,
      second.stderr.text(),
      second.stdout.text(),
    ]);
    assert.notEqual(status.code, 0);
    assert.match(err, /already using DATA_DIR/);

    const login = await fetch(`http://127.0.0.1:${port}/api/v1/auth/token`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: secrets.admin_password }),
    });
    const { access_token } = await login.json();
    const bytes = await makeImage("png", 320, 200);
    const form = new FormData();
    form.append("file", new File([bytes as BlobPart], "a.png"));
    form.append("tags", "kept");
    const up = await fetch(`http://127.0.0.1:${port}/api/v1/images`, {
      method: "POST",
      headers: { authorization: `Bearer ${access_token}` },
      body: form,
    });
    assert.equal(up.status, 201);
    const img = await up.json();
    const stopped = await stop(first);
    assert.equal(stopped.code, 0);
    assert.match(stopped.out, /development sign-in|embedded PostgreSQL started/);

    const port2 = freePort();
    const again = start(dataDir, port2);
    await waitHealthy(port2, again);
    const list = await (await fetch(`http://127.0.0.1:${port2}/api/v1/images?tags=kept`)).json();
    assert.deepEqual(list.items.map((i: { short_id: string }) => i.short_id), [img.short_id]);
    const file = await fetch(`http://127.0.0.1:${port2}${img.file_url}`);
    assert.deepEqual(new Uint8Array(await file.arrayBuffer()), bytes);
    assert.equal((await stop(again)).code, 0);
    // The embedded PostgreSQL went down with it: its pid file is gone.
    await assert.rejects(Deno.stat(`${dataDir}/postgres/postmaster.pid`));
  } finally {
    await Deno.remove(dataDir, { recursive: true }).catch(() => {});
  }
});
