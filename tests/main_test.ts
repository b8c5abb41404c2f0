/**
 * The real entry, main.ts, in a child process: a bad setting stops it with a message naming the
 * variable; ADMIN_USERNAME, THUMBNAIL_WORKERS and LOG_LEVEL reach the running service; Ctrl-C
 * (SIGINT) shuts it down cleanly.
 */
import assert from "node:assert/strict";
import { TEST_PASSWORD } from "./_harness/app.ts";
import {
  childEnv,
  type ChildService,
  spawnChild,
  spawnService,
  startArgs,
} from "./_harness/child.ts";
import { freshDatabase } from "./_harness/db.ts";
import { disposeS3, startS3 } from "./_harness/s3.ts";
import { within } from "./_harness/waits.ts";
import { mayLowerNice, threadNices } from "./_harness/threads.ts";
import { EVENT_LOOP_NICE } from "../adapters/event_loop.ts";

const db = await freshDatabase();
const s3 = await startS3();
Deno.test.afterAll(async () => {
  await db.drop();
  await disposeS3(s3);
});

/** The JSON log lines a child wrote (other output is skipped). */
function logLines(child: ChildService): { level: string; msg: string; [k: string]: unknown }[] {
  return child.output().split("\n").flatMap((l) => {
    try {
      const line = JSON.parse(l);
      return line && typeof line.msg === "string" ? [line] : [];
    } catch {
      return [];
    }
  });
}

/** The threads of process `pid` that run a Web Worker. */
async function webWorkerThreads(pid: number): Promise<number> {
  let n = 0;
  for await (const task of Deno.readDir(`/proc/${pid}/task`)) {
    const name = await Deno.readTextFile(`/proc/${pid}/task/${task.name}/comm`).catch(() => "");
    if (/^worker-\d+$/.test(name.trim())) n++;
  }
  return n;
}

function signIn(base: string, username: string, headers: Record<string, string> = {}) {
  return fetch(`${base}/api/v1/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ username, password: TEST_PASSWORD }),
  });
}

Deno.test("main.ts exits 1 with a message naming the variable on a bad setting, no stack trace", async () => {
  const unused = { url: "postgres://postgres@127.0.0.1:1/none" };
  const noS3 = { endpoint: "http://127.0.0.1:1", settings: { bucket: "none" } };
  for (const [name, value] of [["PORT", "eighty"], ["THUMBNAIL_WORKERS", "0"]]) {
    const child = spawnChild({
      args: await startArgs(),
      env: { ...childEnv(unused, noS3), [name]: value },
    });
    const status = await within(child.status, 60_000, `main.ts with ${name}=${value}`);
    assert.equal(status.code, 1, child.output());
    assert.match(child.stderr(), new RegExp(`\\b${name}\\b`), child.output());
    assert.doesNotMatch(child.output(), /^\s+at /m, "a message, not a stack trace");
  }
});

Deno.test("ADMIN_USERNAME, THUMBNAIL_WORKERS and LOG_LEVEL=info reach the service; SIGINT stops it, exit 0", async () => {
  const env = childEnv(db, s3, {
    ADMIN_USERNAME: "moderator",
    THUMBNAIL_WORKERS: "3",
    LOG_LEVEL: "info",
  });
  const child = await spawnService(await startArgs(), env);
  try {
    // As the kernel sees it, before any sign-in starts a password worker (services/passwords.ts):
    // Deno runs each Web Worker on a thread named "worker-<n>".
    assert.equal(await webWorkerThreads(child.pid), 3, "one thread per thumbnail worker");
    const threads = threadNices(child.pid);

    const ok = await signIn(child.base, "moderator");
    assert.equal(ok.status, 200, await ok.clone().text());
    assert.equal(typeof (await ok.json()).access_token, "string");
    const admin = await signIn(child.base, "admin");
    assert.equal(admin.status, 401, "the default name is not the configured one");
    await admin.body?.cancel();

    const lines = logLines(child);
    const started = lines.find((l) => l.msg === "thumbnail workers started");
    assert.equal(started?.workers, 3, child.output());
    // Requests first where the system allows it (root here in CI): the event loop's thread only;
    // the workers, started before, keep their priority.
    const loop = threads.find((t) => t.tid === child.pid)!;
    assert.equal(lines.find((l) => l.msg === "event loop priority")?.nice, loop.nice);
    // Allowed (CAP_SYS_NICE, as root in CI): EVENT_LOOP_NICE; else 0 (the next test makes that
    // case as root too).
    const allowed = mayLowerNice(child.pid, EVENT_LOOP_NICE);
    assert.equal(loop.nice, allowed ? EVENT_LOOP_NICE : 0);
    for (const worker of threads.filter((t) => /^worker-\d+$/.test(t.name))) {
      assert.equal(worker.nice, 0, worker.name);
    }
    assert.ok(lines.some((l) => l.msg === "request" && l.level === "info"), "info lines written");
    // In words: the data's place, then the address and how to sign in; a configured password is
    // named, never printed.
    const said = child.stderr().split("\n");
    assert.ok(
      said.includes(
        "Reaction board is starting on the PostgreSQL of DATABASE_URL, images in the S3 bucket " +
          `"${s3.settings.bucket}".`,
      ),
      child.stderr(),
    );
    assert.ok(
      said.includes(
        `Listening on ${child.base} — sign in as moderator with the password set in ADMIN_PASSWORD.`,
      ),
      child.stderr(),
    );
    assert.ok(!child.output().includes(TEST_PASSWORD), "the configured password is never printed");

    child.kill("SIGINT");
    const status = await within(child.status, 60_000, "exit after SIGINT");
    assert.equal(status.code, 0, child.output());
    const stop = logLines(child).find((l) => l.msg === "shutting down");
    assert.equal(stop?.signal, "SIGINT", child.output());
    await assert.rejects(fetch(`${child.base}/api/v1/health`), "nothing listens after exit");
  } finally {
    await child.stop(1_000);
  }
});

Deno.test("LOG_LEVEL=warn writes warnings and nothing below them; unprivileged, priority stays 0", async () => {
  const env = childEnv(db, s3, { LOG_LEVEL: "warn", LOGIN_TRUSTED_PROXY_IPS: "127.0.0.1" });
  // Where this process may raise priorities (root), the service runs without that right, as
  // the Docker image's user does: no CAP_SYS_NICE, an RLIMIT_NICE of 0.
  const unprivileged = mayLowerNice("self", EVENT_LOOP_NICE)
    ? ["--nice=0:0", "--", "setpriv", "--bounding-set=-sys_nice", "--", Deno.execPath()]
    : null;
  const child = await spawnService(
    [...unprivileged ?? [], ...await startArgs()],
    env,
    { command: unprivileged ? "prlimit" : undefined },
  );
  try {
    assert.equal(mayLowerNice(child.pid, EVENT_LOOP_NICE), false, "the service lacks the right");
    // It started all the same, every thread at normal priority.
    assert.deepEqual(
      threadNices(child.pid).filter((t) => t.nice !== 0),
      [],
      "threads at normal priority",
    );
    // From a trusted proxy without X-Real-IP: the address comes from X-Forwarded-For, a warning.
    const res = await signIn(child.base, "admin", { "x-forwarded-for": "198.51.100.7" });
    assert.equal(res.status, 200);
    await res.body?.cancel();
    await within(
      (async () => {
        while (!logLines(child).some((l) => l.level === "warn")) {
          await new Promise((r) => setTimeout(r, 50));
        }
      })(),
      30_000,
      "the X-Forwarded-For warning",
    );
  } finally {
    await child.stop();
  }
  const lines = logLines(child);
  assert.ok(lines.some((l) => /X-Forwarded-For/.test(l.msg)), child.output());
  const below = lines.filter((l) => l.level === "info" || l.level === "debug");
  assert.deepEqual(below, [], "no info or debug line at LOG_LEVEL=warn");
});
