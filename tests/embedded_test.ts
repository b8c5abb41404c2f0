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
import { postgresUser } from "../adapters/embedded_postgres/binaries.ts";
import { startCluster } from "../adapters/embedded_postgres/cluster.ts";
import { CLUSTERS_DIR, placeCluster } from "../adapters/embedded_postgres/placement.ts";
import { StartupError } from "../adapters/startup.ts";

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
    // In words, before any JSON line: where the data lives; then where to go and how to sign
    // in, with the generated password (exactly the one kept in secrets.json) and no log line
    // carrying it.
    const err = first.stderr().split("\n");
    const starting = err.indexOf(
      `Reaction board is starting on an embedded PostgreSQL, keeping its data and images under ` +
        `${dataDir}.`,
    );
    assert.ok(starting >= 0, first.stderr());
    assert.ok(!err.slice(0, starting).some((l) => l.startsWith("{")), first.stderr());
    assert.ok(
      err.includes(
        `Listening on http://127.0.0.1:${port} — sign in as admin with password ` +
          `${secrets.admin_password} (kept in ${dataDir}/secrets.json).`,
      ),
      first.stderr(),
    );
    const logs = [...first.stdout().split("\n"), ...err].filter((l) => l.startsWith("{"));
    assert.ok(logs.length > 0 && logs.every((l) => !l.includes(secrets.admin_password)));

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
    await healthy(again);
    assert.equal(await Deno.realPath(`${dataDir}/postgres`), cluster);
    assert.equal((await stop(again)).code, 0);
  } finally {
    await Promise.all(started.splice(0).map((c) => c.stop(30_000)));
    if (cluster) await Deno.remove(cluster, { recursive: true }).catch(() => {});
    await Deno.remove(closed, { recursive: true }).catch(() => {});
  }
});

Deno.test("where a cluster goes does not depend on the working folder: run from a closed one, an open DATA_DIR keeps it", async () => {
  // A checkout in `mktemp -d` or /root, as root: the postgres user cannot enter the working
  // folder, and a check run from there failed, so every DATA_DIR seemed closed to it.
  const closed = await Deno.makeTempDir({ prefix: "board-closed-cwd-" });
  const dataDir = await Deno.makeTempDir({ prefix: "board-open-" });
  const cwd = Deno.cwd();
  let placed: { dir: string; outside: boolean } | undefined;
  try {
    Deno.chdir(closed);
    placed = await placeCluster(dataDir, await postgresUser());
  } finally {
    Deno.chdir(cwd);
    if (placed?.outside) await Deno.remove(placed.dir, { recursive: true }).catch(() => {});
    await Deno.remove(closed, { recursive: true });
    await Deno.remove(dataDir, { recursive: true });
  }
  assert.deepEqual(placed, { dir: `${dataDir}/postgres`, outside: false });
});

Deno.test("a DATA_DIR that cannot be made stops the start with a line saying what to do", async () => {
  const file = await Deno.makeTempFile({ prefix: "board-not-a-folder-" });
  try {
    const child = start(`${file}/data`);
    const status = await child.status;
    assert.equal(status.code, 1);
    // The line that says where the data would live, then the one that says what to change.
    const lines = child.stderr().trim().split("\n");
    assert.equal(lines.length, 2, child.stderr());
    assert.match(lines[0], /^Reaction board is starting on an embedded PostgreSQL, keeping /);
    assert.match(
      lines[1],
      /^DATA_DIR .+ cannot be used \(.+\): set DATA_DIR to a folder you can write\.$/,
    );
  } finally {
    await Deno.remove(file);
  }
});

/** The exit of a start that must stop by itself; a generous guard stops one that does not. */
async function exitOf(child: Child): Promise<Deno.CommandStatus> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const guard = new Promise<null>((r) => timer = setTimeout(() => r(null), 90_000));
  const status = await Promise.race([child.status, guard]);
  clearTimeout(timer);
  if (status) return status;
  await child.stop(30_000);
  assert.fail(`the start was not refused: still running after 90 s\n${child.output()}`);
}

/** Owner, mode and entries of a folder: what a refused start must leave as it was. */
async function snapshot(dir: string) {
  const info = await Deno.stat(dir);
  const names = [];
  for await (const e of Deno.readDir(dir)) names.push(e.name);
  return { uid: info.uid, gid: info.gid, mode: info.mode! & 0o7777, names: names.sort() };
}

Deno.test("a DATA_DIR every user can write is refused with a line saying what to do", async () => {
  for (const mode of [0o777, 0o1777]) {
    const dataDir = await Deno.makeTempDir({ prefix: "board-open-" });
    try {
      await Deno.chmod(dataDir, mode);
      const child = start(dataDir);
      const status = await exitOf(child);
      assert.equal(status.code, 1, child.output());
      // The start's plain first line, then the refusal: no JSON line, nothing else.
      const [starting, ...rest] = child.stderr().trim().split("\n");
      assert.match(starting, /^Reaction board is starting/);
      assert.deepEqual(rest, [
        `DATA_DIR ${dataDir} can be written by every user (mode ${mode.toString(8)}): make it ` +
        `yours alone (chmod o-w) or set DATA_DIR to another folder.`,
      ]);
      assert.deepEqual((await snapshot(dataDir)).names, [], "nothing was made in it");
    } finally {
      await Promise.all(started.splice(0).map((c) => c.stop(30_000)));
      await removeDataDir(dataDir);
    }
  }
});

Deno.test("a pre-made DATA_DIR/postgres link to another folder is refused; the folder is left as it was", async () => {
  const dataDir = await Deno.makeTempDir({ prefix: "board-linked-" });
  const victim = await Deno.makeTempDir({ prefix: "board-victim-" });
  try {
    await Deno.writeTextFile(`${victim}/keep.txt`, "not a cluster");
    await Deno.symlink(victim, `${dataDir}/postgres`);
    const before = await snapshot(victim);
    const child = start(dataDir);
    const status = await exitOf(child);
    assert.equal(status.code, 1, child.output());
    if (Deno.uid() === 0) {
      // The last line: the development sign-in is printed before the database starts.
      assert.deepEqual(child.stderr().trim().split("\n").slice(-1), [
        `${dataDir}/postgres links to ${victim}, which is not a cluster of this service (those ` +
        `are folders of "postgres" in ${CLUSTERS_DIR}): remove the link, or set DATA_DIR to ` +
        `another folder.`,
      ]);
    } else {
      // An ordinary user's own link is followed; initdb refuses a folder that is not empty.
      assert.match(child.stderr(), /could not initialise/);
    }
    assert.deepEqual(await snapshot(victim), before, "owner, mode and contents unchanged");
  } finally {
    await Promise.all(started.splice(0).map((c) => c.stop(30_000)));
    await Deno.remove(`${dataDir}/postgres`).catch(() => {});
    await Deno.remove(dataDir, { recursive: true });
    await Deno.remove(victim, { recursive: true });
  }
});

Deno.test("as root a link is followed only to a folder of the clusters folder that postgres owns", async () => {
  const runAs = await postgresUser();
  const tmp = await Deno.makeTempDir({ prefix: "board-placement-" });
  const clusters = `${tmp}/clusters`;
  const dataDir = `${tmp}/data`;
  const victim = `${tmp}/victim`;
  try {
    await Deno.mkdir(clusters);
    await Deno.mkdir(dataDir);
    await Deno.mkdir(victim);
    const link = (to: string) =>
      Deno.remove(`${dataDir}/postgres`).catch(() => {}).then(() =>
        Deno.symlink(to, `${dataDir}/postgres`)
      );
    const id = crypto.randomUUID();
    if (!runAs) {
      // An ordinary user's link is followed where it points; nothing is handed to anyone.
      await link(victim);
      assert.deepEqual(await placeCluster(dataDir, runAs, clusters), {
        dir: victim,
        outside: true,
      });
      return;
    }
    const refused = (e: unknown) => e instanceof StartupError && /not a cluster/.test(e.message);
    // Outside the clusters folder; a cluster's name that is itself a link; a name not ours.
    await link(victim);
    await assert.rejects(placeCluster(dataDir, runAs, clusters), refused);
    await Deno.symlink(victim, `${clusters}/${id}`);
    await link(`${clusters}/${id}`);
    await assert.rejects(placeCluster(dataDir, runAs, clusters), refused);
    await Deno.remove(`${clusters}/${id}`);
    await Deno.mkdir(`${clusters}/not-a-uuid`);
    await link(`${clusters}/not-a-uuid`);
    await assert.rejects(placeCluster(dataDir, runAs, clusters), refused);
    // A folder of root's under a cluster's name is not handed over either.
    await Deno.mkdir(`${clusters}/${id}`);
    await link(`${clusters}/${id}`);
    await assert.rejects(placeCluster(dataDir, runAs, clusters), refused);
    assert.equal((await Deno.stat(`${clusters}/${id}`)).uid, 0);
    assert.equal((await Deno.stat(victim)).uid, 0);
    // postgres's own cluster folder is followed; a missing one is made again, for postgres.
    await Deno.chown(`${clusters}/${id}`, runAs.uid, runAs.gid);
    assert.deepEqual(await placeCluster(dataDir, runAs, clusters), {
      dir: `${clusters}/${id}`,
      outside: true,
    });
    const gone = crypto.randomUUID();
    await link(`${clusters}/${gone}`);
    assert.deepEqual(await placeCluster(dataDir, runAs, clusters), {
      dir: `${clusters}/${gone}`,
      outside: true,
    });
    const made = await Deno.lstat(`${clusters}/${gone}`);
    assert.ok(made.isDirectory && made.uid === runAs.uid && (made.mode! & 0o777) === 0o700);
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
});

Deno.test("an existing folder is not handed to postgres: the cluster is refused, its owner kept", async () => {
  const runAs = await postgresUser();
  const dir = await Deno.makeTempDir({ prefix: "board-existing-" });
  try {
    await Deno.chmod(dir, 0o755);
    if (!runAs) {
      // An ordinary user runs PostgreSQL as itself: there is no one to hand a folder to.
      assert.equal(Deno.uid() === 0, false);
      return;
    }
    const outcome = await startCluster({ dir, password: "x", runAs, scratch: true }).catch((e) =>
      e
    );
    if (!(outcome instanceof Error)) {
      await outcome.stop();
      assert.fail("a cluster was made in a folder that already existed");
    }
    assert.ok(outcome instanceof StartupError, String(outcome));
    assert.match(outcome.message, /already exists and is not a folder of the user "postgres"/);
    assert.equal((await Deno.stat(dir)).uid, Deno.uid());
    assert.deepEqual((await snapshot(dir)).names, []);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
