/**
 * Two replicas (main.ts, each a process of its own) on one database and one bucket, behind
 * Debian's nginx running the README's nginx block (tests/_harness/cluster.ts). Through
 * nginx: the login lock is shared, a listing never lags behind an upload through the other
 * replica, the same bytes uploaded to both at once give one row, a delete on one is a 404 on
 * the other, uploads of MAX_UPLOAD_BYTES pass, a storage outage is a 503 with Retry-After (never
 * nginx's 502), and a replica stopped under load (SIGTERM, and SIGKILL) costs no client an error
 * beyond the documented 503s and leaves nothing half-written.
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../domain/hash.ts";
import { TEST_PASSWORD } from "../_harness/app.ts";
import type { ChildService } from "../_harness/child.ts";
import { makeImage, randomTag } from "../_harness/images.ts";
import { connectionsTo } from "../_harness/nginx.ts";
import { Cluster, type Replica, type Sent } from "../_harness/cluster.ts";
import {
  answeredBy,
  assertClientsAndStore,
  loadThroughNginx,
  type Phase,
  sendTo,
  sendWatched,
  type StableImage,
} from "../_harness/replica_load.ts";
import { until, within } from "../_harness/waits.ts";

const MAX_FAILURES = 4;

// Two replicas would otherwise both build the client assets at start, into one folder.
try {
  Deno.statSync(new URL("../../_build/manifest.json", import.meta.url));
} catch {
  await (await import("../../adapters/islands/build.ts")).buildAssets({ writeGen: false });
}

const cluster = await Cluster.start(["A", "B"], { LOGIN_MAX_FAILURES: String(MAX_FAILURES) });
Deno.test.afterAll(() => cluster.close());
const { db, replicas, nginx } = cluster;
const auth = await cluster.signIn();
const call = cluster.call.bind(cluster);

Deno.test("the client's address passes nginx: failures split across the replicas lock after LOGIN_MAX_FAILURES", async () => {
  await cluster.allInRotation(); // a stop test before it may have left one down
  const attempt = (password: string) =>
    call("/api/v1/auth/token", {
      method: "POST",
      // nginx overwrites X-Real-IP, so a client cannot choose the address it is counted under.
      headers: {
        "content-type": "application/json",
        "x-real-ip": "198.51.100.7",
        "x-forwarded-for": "198.51.100.7",
      },
      body: JSON.stringify({ username: "admin", password }),
    });
  try {
    const failedOn = new Set<string>();
    for (let i = 1; i < MAX_FAILURES; i++) {
      const { res, id } = await attempt("wrong");
      assert.equal(res.status, 401, `failure ${i}`);
      await res.body?.cancel();
      failedOn.add(await cluster.servedBy(id));
    }
    assert.equal(failedOn.size, replicas.length, `failures only on ${[...failedOn]}`);
    const { res } = await attempt("wrong");
    assert.equal(res.status, 429, "the LOGIN_MAX_FAILURES-th failure");
    await res.body?.cancel();

    // Locked on both, even with the right password.
    await cluster.onEachReplica(() => attempt(TEST_PASSWORD), async (res, replica) => {
      assert.equal(res.status, 429, `the right password on ${replica}`);
      assert.ok(res.headers.get("retry-after"));
      await res.body?.cancel();
    });
    // Counted under the client's address: not nginx's, not the one the client claimed.
    const rows = await db.sql`select ip, failures from login_failures`;
    assert.deepEqual(rows.map((r) => ({ ...r })), [{ ip: "127.0.0.1", failures: MAX_FAILURES }]);
  } finally {
    await db.sql`delete from login_failures`;
  }
});

Deno.test("a listing on one replica shows an upload through the other on the next request, page and API", async () => {
  await cluster.allInRotation(); // a stop test before it may have left one down
  const tag = randomTag("fresh");
  const api = () => call(`/api/v1/images?tags=${tag}`);
  const page = () => call(`/?tags=${tag}`);
  const uploadedOn = new Set<string>();
  for (let round = 0; round < 6 && uploadedOn.size < replicas.length; round++) {
    // nginx takes turns: one request more than last round puts the upload on the other replica.
    if (round % 2) await (await call("/api/v1/health")).res.body?.cancel();
    // Both replicas have the listing and its page at the current state of the database...
    await cluster.onEachReplica(api, async (res) => {
      assert.equal((await res.json()).items.length, round);
    });
    await cluster.onEachReplica(page, async (res) => {
      assert.equal(res.status, 200);
      await res.body?.cancel();
    });
    // ...then one of them takes an upload, and every listing after it shows the image.
    const { res, id } = await cluster.upload(auth, await makeImage("png", 64, 48), [tag]);
    assert.equal(res.status, 201);
    const { short_id } = await res.json();
    const by = await cluster.servedBy(id);
    uploadedOn.add(by);
    await cluster.onEachReplica(api, async (res, replica) => {
      const ids = (await res.json()).items.map((i: { short_id: string }) => i.short_id);
      assert.ok(ids.includes(short_id), `${replica} lists without ${short_id} (uploaded on ${by})`);
    });
    await cluster.onEachReplica(page, async (res, replica) => {
      assert.ok((await res.text()).includes(short_id), `${replica}'s page lacks ${short_id}`);
    });
  }
  assert.equal(uploadedOn.size, replicas.length, "uploads went to both replicas");
});

Deno.test("the same bytes uploaded through both replicas at once give one row", async () => {
  await cluster.allInRotation(); // a stop test before it may have left one down
  let used = new Set<string>();
  for (let round = 0; round < 5 && used.size < replicas.length; round++) {
    const bytes = await makeImage("jpeg", 800, 600);
    const tags = [randomTag("twin"), randomTag("twin")];
    const sent = await Promise.all(tags.map((t) => cluster.upload(auth, bytes, [t])));
    used = new Set(await Promise.all(sent.map((s) => cluster.servedBy(s.id))));
    const answers = await Promise.all(sent.map(async ({ res }) => ({
      status: res.status,
      img: await res.json(),
    })));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 201], JSON.stringify(answers));
    assert.equal(answers[0].img.short_id, answers[1].img.short_id);
    const rows = await db.sql`select short_id from images where hash = ${sha256Hex(bytes)}`;
    assert.deepEqual(rows.map((r) => r.short_id), [answers[0].img.short_id]);
    const { res } = await call(`/api/v1/images/${answers[0].img.short_id}`);
    const names = (await res.json()).tags.map((t: { name: string }) => t.name);
    assert.deepEqual(names.sort(), tags.sort(), "both uploads' tags");
  }
  assert.equal(used.size, replicas.length, "the two uploads went to both replicas");
});

Deno.test("a replica a failed test left frozen is killed and started again before the next test", async () => {
  await cluster.allInRotation();
  const victim = replicas[1];
  const frozenPid = victim.child!.pid;
  victim.child!.kill("SIGSTOP");
  await until(`${victim.name} frozen`, () => victim.frozen(), 10_000); // a signal lands later
  await cluster.allInRotation();
  assert.notEqual(victim.child!.pid, frozenPid, "the frozen process was started again");
  assert.equal(await victim.frozen(), false);
  // Both answer again: neither holds a request.
  await cluster.onEachReplica(() => call("/api/v1/health"), async (res) => {
    assert.equal(res.status, 200);
    await res.body?.cancel();
  });
});

Deno.test("a delete through one replica is a 404 on the other, bytes included", async () => {
  await cluster.allInRotation(); // a stop test before it may have left one down
  const { res: created } = await cluster.upload(auth, await makeImage("png", 120, 90));
  assert.equal(created.status, 201);
  const { short_id } = await created.json();
  const paths = ["", "/file", "/thumbnail"].map((p) => `/api/v1/images/${short_id}${p}`);
  // Both replicas have served the image, so its bytes sit in both delivery caches.
  for (const path of paths) {
    await cluster.onEachReplica(() => call(path), async (res) => {
      assert.equal(res.status, 200, path);
      await res.arrayBuffer();
    });
  }
  const { res: deleted, id } = await call(`/api/v1/images/${short_id}`, {
    method: "DELETE",
    headers: auth,
  });
  assert.equal(deleted.status, 204);
  const by = await cluster.servedBy(id);
  for (const path of paths) {
    await cluster.onEachReplica(() => call(path), async (res, replica) => {
      assert.equal(res.status, 404, `${path} on ${replica} after a delete on ${by}`);
      await res.body?.cancel();
    });
  }
});

Deno.test("an upload of MAX_UPLOAD_BYTES passes nginx and reaches a replica", async () => {
  await cluster.allInRotation(); // a stop test before it may have left one down
  // Not an image: a replica reads it and refuses it (415), where nginx's default body limit
  // (1 MiB) would have refused it first (413, in HTML).
  const { res, id } = await cluster.upload(auth, new Uint8Array(20 * 1024 * 1024));
  assert.equal(res.status, 415, await res.clone().text());
  assert.equal((await res.json()).code, "unsupported_image");
  await cluster.servedBy(id); // a replica logged it
});

Deno.test("a storage outage answers 503 with Retry-After through nginx, never 502, until storage is back", async () => {
  await cluster.allInRotation(); // a stop test before it may have left one down
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) {
    const { res } = await cluster.upload(auth, await makeImage("png", 50 + i, 40));
    assert.equal(res.status, 201);
    ids.push((await res.json()).short_id); // never read: not in a delivery cache
  }
  const from: string[] = [];
  await cluster.s3.stop();
  try {
    for (const id of ids) {
      const sent = await call(`/api/v1/images/${id}/file`);
      assert.equal(sent.res.status, 503);
      assert.ok(sent.res.headers.get("retry-after"));
      from.push(answeredBy(cluster, sent, (await sent.res.json()).detail));
    }
  } finally {
    await cluster.s3.restart();
  }
  // Every replica answered 503, so nginx took them all out of rotation and answered itself.
  assert.deepEqual(from, ["replica", "nginx", "nginx"]);
  await until(
    "the bytes again",
    async () => {
      const { res } = await call(`/api/v1/images/${ids[0]}/file`);
      await res.body?.cancel();
      return res.status === 200;
    },
    30_000,
    200,
  );
});

// ---- a replica stopped under load ----

/** Images for the load to read; never deleted. */
const stable: StableImage[] = [];
for (let i = 0; i < 4; i++) {
  const { res } = await cluster.upload(auth, await makeImage("png", 200, 150), ["stable"]);
  assert.equal(res.status, 201);
  stable.push(await res.json());
}

/**
 * Runs the load with every replica in rotation; once `victim` has served some of it and nginx
 * has a request in flight to it, stops it with `stop` (which may hold the load meanwhile); lets
 * the load go on for 60 more requests.
 */
async function stopUnderLoad(
  victim: Replica,
  stop: (child: ChildService, phase: Phase, nginxLog: () => string) => Promise<void>,
) {
  await cluster.allInRotation();
  const rowsBefore = new Set(
    (await db.sql<{ short_id: string }[]>`select short_id from images`).map((r) => r.short_id),
  );
  const logFrom = nginx.child.stderr().length;
  const nginxLog = () => nginx.child.stderr().slice(logFrom);
  const child = victim.child!;
  const phase: Phase = { stopped: false, held: false, finished: false, inFlight: 0 };
  const servedBefore = victim.served;
  const running = loadThroughNginx(cluster, auth, stable, phase);
  try {
    await until(
      `${victim.name} serving the load`,
      async () => victim.served >= servedBefore + 10 && await connectionsTo(victim.port) > 0,
    );
    await stop(child, phase, nginxLog);
    phase.stopped = true;
    phase.held = false;
    const stoppedAt = cluster.requests;
    await until("the load going on", () => cluster.requests >= stoppedAt + 60, 60_000);
  } finally {
    phase.finished = true;
  }
  const run = await within(running, 60_000, "the load");
  return { run, child, rowsBefore, nginxLog };
}

/**
 * Holds the row of tag `name` locked until the returned function is called: an upload with that
 * tag waits for it (its tag count is a row update), in flight for as long as the test wants.
 */
async function lockTag(name: string): Promise<() => Promise<void>> {
  await db.sql`insert into tags (name) values (${name}) on conflict do nothing`;
  let release!: () => void;
  const released = new Promise<void>((r) => release = r);
  let locked!: () => void;
  const isLocked = new Promise<void>((r) => locked = r);
  const tx = db.sql.begin(async (sql) => {
    await sql`select 1 from tags where name = ${name} for update`;
    locked();
    await released;
  });
  await Promise.race([isLocked, tx]);
  return async () => {
    release();
    await tx;
  };
}

Deno.test("SIGTERM to a replica under load: it finishes what it has, nginx gives the rest to the other, a POST it turns away gets the documented 503", async () => {
  const victim = replicas[0];
  const slow: { answer: Promise<Sent>; bytes: Uint8Array }[] = [];
  let turnedAway: { sent: Sent; bytes: Uint8Array } | undefined;
  const reads: number[] = [];
  const stopped = await stopUnderLoad(victim, async (c, phase, nginxLog) => {
    // The load held, an upload that waits for a lock the test holds: in flight on the victim.
    phase.held = true;
    await until("the load's requests answered", () => phase.inFlight === 0);
    const unlock = await lockTag("slow");
    try {
      for (let i = 0; i < 6; i++) {
        const bytes = await makeImage("png", 90, 60);
        const { answer, replica } = await sendWatched(cluster, () => {
          return cluster.upload(auth, bytes, ["slow"]);
        });
        slow.push({ answer, bytes });
        if (replica === victim) break;
      }
      c.kill("SIGTERM");
      await until("the shutdown to begin", () => victim.logged("shutting down") !== undefined);
      // While it waits for that upload: an upload nginx gives it is turned away...
      for (let i = 0; i < 6 && !turnedAway; i++) {
        const bytes = await makeImage("png", 91, 61);
        const sent = await cluster.upload(auth, bytes, ["turned-away"]);
        if (sent.res.status === 201) await sent.res.body?.cancel();
        else turnedAway = { sent, bytes };
      }
      // ...and a read nginx gives it is answered by the other replica.
      const logFrom = nginxLog().length;
      const disabled = () => /temporarily disabled/.test(nginxLog().slice(logFrom));
      for (let i = 0; i < 6 && !disabled(); i++) {
        const { res } = await call(`/api/v1/images/${stable[0].short_id}/file`);
        reads.push(res.status);
        await res.body?.cancel();
      }
      assert.ok(reads.every((s) => s === 200), `reads while it drained: ${reads}`);
      assert.ok(disabled(), "no read reached the draining replica");
      assert.ok(c.alive(), "it was still draining");
    } finally {
      await unlock();
    }
  });
  const { run, child, rowsBefore } = stopped;
  const status = await within(child.status, 35_000, `${victim.name} exiting`);
  assert.equal(status.code, 0, child.output());
  assert.ok(victim.logged("stopped"), child.output());

  // The upload it had finished: answered and logged before it stopped.
  const inFlight = Number(victim.logged("shutting down")!.in_flight);
  assert.ok(inFlight >= 1, "the upload was in flight at SIGTERM");
  assert.ok(victim.servedAfter("shutting down") >= inFlight);
  for (const { answer, bytes } of slow) {
    const { res } = await answer;
    assert.equal(res.status, 201, await res.clone().text());
    run.uploads.set((await res.json()).short_id, bytes);
  }
  // The upload it turned away: 503 with Retry-After, not acted on, and not sent elsewhere.
  assert.ok(turnedAway, "no upload reached the draining replica");
  assert.equal(turnedAway.sent.res.status, 503);
  assert.equal(turnedAway.sent.res.headers.get("retry-after"), "5");
  assert.equal((await turnedAway.sent.res.json()).detail, "Shutting down");
  const [{ n }] = await db.sql`
    select count(*)::int as n from images where hash = ${sha256Hex(turnedAway.bytes)}`;
  assert.equal(n, 0);

  await assertClientsAndStore(cluster, run, { killed: false, rowsBefore });
  // Nothing sent after the stop was answered by it.
  const after = run.outcomes.filter((o) => o.after && cluster.logged(o.id));
  assert.ok(after.length > 0);
  assert.deepEqual(after.filter((o) => cluster.logged(o.id)!.replica === victim.name), []);
});

Deno.test("SIGKILL to a replica with requests in flight: reads fail over, a POST it held answers 503 and is not sent twice", async () => {
  const victim = replicas[1];
  let heldBytes: Uint8Array = new Uint8Array();
  let heldRead!: Promise<Sent>;
  let heldUpload!: Promise<Sent>;
  const { run, child, rowsBefore, nginxLog } = await stopUnderLoad(victim, async (c, phase) => {
    // Frozen first, so that requests are certain to be in it when it dies: some of the load's,
    // then (the load held, so that nothing else comes or goes) one more read and one upload.
    c.kill("SIGSTOP");
    await until("the load's requests in the frozen replica", async () => {
      return await connectionsTo(victim.port) > 0;
    }, 10_000);
    phase.held = true;
    // sendTo tells the replica by its new connection: the other replica's requests must be
    // over first, or one reaching it late would be taken for the read's.
    await until("only the frozen replica's requests in flight", async () => {
      return phase.inFlight === await connectionsTo(victim.port);
    }, 10_000);
    heldRead = (await sendTo(cluster, victim, () => {
      return call(`/api/v1/images/${stable[0].short_id}/file`);
    })).answer;
    heldUpload = (await sendTo(cluster, victim, async () => {
      heldBytes = await makeImage("jpeg", 321, 123); // new bytes: an answered try stored its own
      return await cluster.upload(auth, heldBytes, ["held"]);
    })).answer;
    c.kill("SIGKILL");
  });
  const status = await within(child.status, 10_000, `${victim.name} dying`);
  assert.equal(status.signal, "SIGKILL");
  assert.match(nginxLog(), /reset by peer|prematurely closed/, "nginx lost requests in flight");

  // The read it held was given to the other replica.
  const read = (await heldRead).res;
  assert.equal(read.status, 200);
  assert.equal((await read.arrayBuffer()).byteLength, stable[0].size_bytes);
  // The upload it held was not: its client is told to try again, and nothing was stored.
  const held = await heldUpload;
  assert.equal(held.res.status, 503);
  assert.ok(held.res.headers.get("retry-after"));
  assert.equal(answeredBy(cluster, held, (await held.res.json()).detail), "nginx");
  const [{ n }] = await db.sql`
    select count(*)::int as n from images where hash = ${sha256Hex(heldBytes)}`;
  assert.equal(n, 0, "nginx sent the upload to the other replica as well");
  const { res: again } = await cluster.upload(auth, heldBytes, ["held"]);
  assert.equal(again.status, 201, "sending it again is safe");
  run.uploads.set((await again.json()).short_id, heldBytes);

  await assertClientsAndStore(cluster, run, { killed: true, rowsBefore });
});
