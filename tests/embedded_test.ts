/**
 * The embedded default: `deno task start` with no DATABASE_URL and no S3_BUCKET runs a real
 * PostgreSQL and the filesystem store under DATA_DIR, keeps its data across restarts, refuses a
 * second process on the same DATA_DIR, shuts everything down on SIGTERM and SIGINT, works as root
 * in a folder PostgreSQL's user cannot enter, and stops with one line where it cannot work.
 */
import assert from "node:assert/strict";
import {
  boundPort,
  type Child,
  hostEnv,
  spawnChild,
  startArgs,
  waitReady,
} from "./_harness/child.ts";
import { makeImage } from "./_harness/images.ts";
import { postgresUser } from "../lib/embedded/binaries.ts";
import { CLUSTERS_DIR, placeCluster } from "../lib/embedded/placement.ts";

const MAIN = await startArgs();
/** Every process started here, stopped at the end even when an assertion failed half-way. */
const started: Child[] = [];

/**
 * `deno task start`'s command with only DATA_DIR, PORT and HOST: the embedded default, on the
 * port the kernel gives it (`healthy` reads it back).
 */
function start(dataDir: string): Child {
  const child = spawnChild({
    args: MAIN,
    env: { ...hostEnv(), DATA_DIR: dataDir, PORT: "0", HOST: "127.0.0.1" },
  });
  started.push(child);
  return child;
}

async function stop(child: Child) {
  const status = await child.stop(30_000);
  return { code: status.code, out: child.stdout() };
}

/** The `msg` of every JSON log line in `text`. */
function logMessages(text: string): string[] {
  return text.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l).msg);
}

/** Waits until `child` answers health 200; returns the port it listens on. */
async function healthy(child: Child): Promise<number> {
  const port = await boundPort(child, 90_000);
  await waitReady(child, `http://127.0.0.1:${port}/api/v1/health`, {
    timeoutMs: 90_000,
    intervalMs: 200,
  });
  return port;
}

Deno.test("a fresh DATA_DIR starts, answers health, keeps its data across a restart", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "board-embedded-" });
  try {
    const first = start(dataDir);
    const port = await healthy(first);
    const secrets = JSON.parse(await Deno.readTextFile(`${dataDir}/secrets.json`));
    assert.ok(secrets.admin_password.length >= 12);
    assert.ok(new TextEncoder().encode(secrets.jwt_secret).length >= 32);

    // A second process on the same DATA_DIR stops with a clear message.
    const second = start(dataDir);
    const status = await second.status;
    assert.notEqual(status.code, 0);
    assert.match(second.stderr(), /already using DATA_DIR/);

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
    // The generated password is printed at start, exactly the one kept in secrets.json.
    assert.ok(
      logMessages(first.stderr()).includes(
        `development sign-in: user "admin", password "${secrets.admin_password}" ` +
          `(generated once and kept in ${dataDir}/secrets.json)`,
      ),
      first.stderr(),
    );

    const again = start(dataDir);
    const port2 = await healthy(again);
    const list = await (await fetch(`http://127.0.0.1:${port2}/api/v1/images?tags=kept`)).json();
    assert.deepEqual(list.items.map((i: { short_id: string }) => i.short_id), [img.short_id]);
    const file = await fetch(`http://127.0.0.1:${port2}${img.file_url}`);
    assert.deepEqual(new Uint8Array(await file.arrayBuffer()), bytes);
    assert.equal((await stop(again)).code, 0);
    // The embedded PostgreSQL went down with it: its pid file is gone.
    await assert.rejects(Deno.stat(`${dataDir}/postgres/postmaster.pid`));
  } finally {
    await Promise.all(started.splice(0).map((c) => c.stop(30_000)));
    await removeDataDir(dataDir);
  }
});

/** Removes a DATA_DIR and the cluster it links to, if its cluster lives outside it. */
async function removeDataDir(dataDir: string) {
  const link = await Deno.readLink(`${dataDir}/postgres`).catch(() => null);
  if (link) await Deno.remove(link, { recursive: true }).catch(() => {});
  await Deno.remove(dataDir, { recursive: true }).catch(() => {});
}

Deno.test("a DATA_DIR in a folder only its owner can enter starts; as root its cluster lives outside", async () => {
  // As `mktemp -d` or /root: mode 0700. As root, PostgreSQL's own user cannot enter it.
  const closed = await Deno.makeTempDir({ prefix: "board-closed-" });
  const dataDir = `${closed}/data`;
  let cluster: string | undefined;
  try {
    const child = start(dataDir);
    await healthy(child);
    const link = await Deno.lstat(`${dataDir}/postgres`);
    cluster = await Deno.realPath(`${dataDir}/postgres`);
    if (Deno.uid() === 0) {
      // The cluster sits where the postgres user can enter, recorded by a link in DATA_DIR.
      assert.ok(link.isSymlink, "DATA_DIR/postgres links to the cluster");
      assert.ok(cluster.startsWith(`${CLUSTERS_DIR}/`), cluster);
      const owner = (await Deno.stat(cluster)).uid;
      assert.equal(owner, (await postgresUser())!.uid, "the cluster belongs to postgres");
      assert.equal((await Deno.stat(closed)).mode! & 0o777, 0o700, "the folder stays closed");
    } else {
      assert.ok(link.isDirectory, "an ordinary user keeps the cluster in DATA_DIR");
    }
    // An ordinary user (PostgreSQL runs as itself: no user to run as) keeps the cluster in
    // DATA_DIR in the same closed folder: the other branch's case, decided where root runs too.
    assert.deepEqual(await placeCluster(`${closed}/other`, undefined), {
      dir: `${closed}/other/postgres`,
      outside: false,
    });
    // Ctrl-C (SIGINT) stops the service and its PostgreSQL.
    child.kill("SIGINT");
    assert.equal((await child.status).code, 0);
    assert.match(child.stdout(), /"stopped"/);
    await assert.rejects(Deno.stat(`${cluster}/postmaster.pid`), Deno.errors.NotFound);

    // A restart finds the same cluster through the link.
    const again = start(dataDir);
    const port2 = await healthy(again);
    assert.equal(await Deno.realPath(`${dataDir}/postgres`), cluster);
    assert.equal((await stop(again)).code, 0);
  } finally {
    await Promise.all(started.splice(0).map((c) => c.stop(30_000)));
    if (cluster) await Deno.remove(cluster, { recursive: true }).catch(() => {});
    await Deno.remove(closed, { recursive: true }).catch(() => {});
  }
});

Deno.test("a DATA_DIR that cannot be made stops the start with one line saying what to do", async () => {
  const file = await Deno.makeTempFile({ prefix: "board-not-a-folder-" });
  try {
    const child = start(`${file}/data`);
    const status = await child.status;
    assert.equal(status.code, 1);
    const lines = child.stderr().trim().split("\n");
    assert.equal(lines.length, 1, child.stderr());
    assert.match(
      lines[0],
      /^DATA_DIR .+ cannot be used \(.+\): set DATA_DIR to a folder you can write\.$/,
    );
  } finally {
    await Deno.remove(file);
  }
});
