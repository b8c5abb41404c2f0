/**
 * Load through nginx for the replica tests: concurrent clients that upload, delete their own
 * uploads and read, each answer recorded as its client saw it; and the checks that follow a
 * replica stopped under that load.
 */
import assert from "node:assert/strict";
import { makeImage } from "./images.ts";
import { connectionsTo } from "./nginx.ts";
import type { Cluster, Replica, Sent } from "./cluster.ts";
import { assertBucketMatchesTables } from "./consistency.ts";
import { sleep, until } from "./waits.ts";

/** Concurrent clients of the load. */
export const WORKERS = 4;

/** An image the load reads and never deletes. */
export interface StableImage {
  short_id: string;
  size_bytes: number;
}

/** What a request of the load got, as its client saw it. */
export interface Outcome {
  kind: "upload" | "list" | "detail" | "file" | "delete";
  id: string;
  status: number | "cut off" | "no answer";
  /** Who answered: a replica, or nginx itself (the README's `@unavailable`). */
  from: "replica" | "nginx" | "unknown";
  detail?: string;
  retryAfter?: string | null;
  /** Sent after the replica was stopped. */
  after: boolean;
  /** The image uploaded or deleted. */
  shortId?: string;
}

/** Tells the load that the replica has been stopped, to send nothing for now, or to end. */
export interface Phase {
  stopped: boolean;
  held: boolean;
  finished: boolean;
  /** Requests of the load not answered yet (kept by the load). */
  inFlight: number;
}

/** What the load's clients do, in turn (and every tenth request, a delete of their own). */
const MIX = ["upload", "list", "detail", "file", "upload"] as const;

/** One request of the load. */
interface Request {
  kind: Outcome["kind"];
  send: () => Promise<Sent>;
  /** An upload's bytes. */
  bytes?: Uint8Array;
  /** The image a delete removes. */
  shortId?: string;
  /** The size of the bytes a file request must get. */
  size?: number;
}

/** Who made a 5xx answer: the service echoes the request id, except while it shuts down. */
export function answeredBy(cluster: Cluster, sent: Sent, detail?: string): Outcome["from"] {
  if (sent.res.headers.get("x-request-id") === sent.id || detail === "Shutting down") {
    return "replica";
  }
  return detail === cluster.nginxDetail ? "nginx" : "unknown";
}

/**
 * Drives the cluster with WORKERS clients (uploads, deletes of their own uploads, listings, and
 * details and bytes of `stable` images) until `phase.finished`; while `phase.held`, nothing new
 * is sent. Returns every outcome and the bytes of every upload a client was told was stored.
 */
export async function loadThroughNginx(
  cluster: Cluster,
  auth: Record<string, string>,
  stable: StableImage[],
  phase: Phase,
) {
  const outcomes: Outcome[] = [];
  const uploads = new Map<string, Uint8Array>();

  /** Request `i` of worker `w`: what it is, and how to send it. */
  const next = async (w: number, i: number, mine: string[]): Promise<Request> => {
    const pick = stable[(w * 7 + i) % stable.length];
    const image = `/api/v1/images/${pick.short_id}`;
    const kind = i % 10 === 9 && mine.length ? "delete" : MIX[i % MIX.length];
    if (kind === "upload") {
      const bytes = await makeImage("jpeg", 64 + w, 48 + (i % 50));
      return { kind, bytes, send: () => cluster.upload(auth, bytes, ["load"]) };
    }
    if (kind === "delete") {
      const shortId = mine.shift()!;
      const init = { method: "DELETE", headers: auth };
      return { kind, shortId, send: () => cluster.call(`/api/v1/images/${shortId}`, init) };
    }
    if (kind === "file") {
      return {
        kind,
        size: pick.size_bytes,
        send: () => cluster.call(`${image}/file`),
      };
    }
    if (kind === "list") {
      return {
        kind,
        send: () => cluster.call("/api/v1/images?tags=load&limit=20"),
      };
    }
    return { kind, send: () => cluster.call(image) };
  };

  /** Sends `req`; what its client saw. */
  const record = async (req: Request): Promise<Outcome> => {
    const base = { kind: req.kind, after: phase.stopped, shortId: req.shortId };
    let sent: Sent;
    try {
      sent = await req.send();
    } catch (e) {
      // nginx itself did not answer: never expected, so recorded for the assertions.
      return { ...base, id: "", status: "no answer", from: "unknown", detail: `${e}` };
    }
    const { res, id } = sent;
    const outcome: Outcome = { ...base, id, status: res.status, from: "replica" };
    try {
      if (res.status >= 500) {
        outcome.retryAfter = res.headers.get("retry-after");
        outcome.detail = (await res.json()).detail;
        outcome.from = answeredBy(cluster, sent, outcome.detail);
      } else if (req.bytes && res.status < 300) {
        outcome.shortId = (await res.json()).short_id as string;
        uploads.set(outcome.shortId, req.bytes);
      } else if (req.size !== undefined) {
        if ((await res.arrayBuffer()).byteLength !== req.size) outcome.status = "cut off";
      } else {
        await res.arrayBuffer();
      }
    } catch {
      outcome.status = "cut off"; // the body broke off, or was not the JSON it claimed
    }
    return outcome;
  };

  const worker = async (w: number) => {
    const mine: string[] = []; // its own uploads, which it deletes
    for (let i = 0; !phase.finished; i++) {
      const req = await next(w, i, mine);
      while (phase.held && !phase.finished) await sleep(5);
      if (phase.finished) break;
      phase.inFlight++;
      try {
        const outcome = await record(req);
        outcomes.push(outcome);
        if (req.bytes && outcome.shortId) mine.push(outcome.shortId);
      } finally {
        phase.inFlight--;
      }
    }
  };
  await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w)));
  return { outcomes, uploads };
}

/**
 * Sends `request` and tells which replica nginx gave it to: the one it opened a connection to,
 * while the answer is still pending. Only meant while nothing else is sent (the load held).
 * `replica` is undefined when the answer came before the connection was seen.
 */
export async function sendWatched(cluster: Cluster, request: () => Promise<Sent>) {
  const count = () => Promise.all(cluster.replicas.map((r) => connectionsTo(r.port)));
  const before = await count();
  const answer = request();
  let settled = false;
  answer.then(() => settled = true, () => settled = true);
  let replica: Replica | undefined;
  await until("an answer, or a connection to a replica", async () => {
    const now = await count();
    const rose = cluster.replicas.filter((_, i) => now[i] > before[i]);
    if (rose.length > 1) throw new Error(`connections rose to ${rose.map((r) => r.name)} at once`);
    replica = rose[0];
    return settled || replica !== undefined;
  }, 10_000);
  return { answer, replica };
}

/** Sends `request` until nginx gives one to `victim`; that request's pending answer. */
export async function sendTo(cluster: Cluster, victim: Replica, request: () => Promise<Sent>) {
  for (let i = 0; i < 6; i++) {
    const { answer, replica } = await sendWatched(cluster, request);
    if (replica === victim) return { answer };
    await (await answer).res.body?.cancel(); // another replica had it: try again
  }
  throw new Error(`nginx gave no request to ${victim.name}`);
}

/**
 * After a replica was stopped under load: every answer a replica logged reached its client as
 * it was; no client saw an error other than a 503 with Retry-After on an upload (from a replica
 * shutting down or busy, or from nginx for a POST that a replica took with it); every image a
 * client was told about is stored with its bytes; every delete took; a row of the load nobody
 * was told about comes only from an upload that a killed replica took with it (none after a
 * graceful stop); and the bucket and the tables agree.
 */
export async function assertClientsAndStore(
  cluster: Cluster,
  run: { outcomes: Outcome[]; uploads: Map<string, Uint8Array> },
  opts: { killed: boolean; rowsBefore: Set<string> },
) {
  const { outcomes, uploads } = run;
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const key = `${o.kind} ${o.status}${o.detail ? ` ${o.from}: ${o.detail}` : ""}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const table = JSON.stringify(Object.fromEntries([...counts].sort()));
  console.log(`what clients saw: ${table}`);
  const bad = outcomes.filter((o) => {
    const logged = cluster.logged(o.id);
    if (logged && logged.status !== o.status) return true;
    if (o.kind === "list" || o.kind === "detail" || o.kind === "file") return o.status !== 200;
    // A delete is retried elsewhere; one whose replica died after committing answers 404.
    if (o.kind === "delete") return !(o.status === 204 || (opts.killed && o.status === 404));
    if (o.status === 201 || o.status === 200) return false;
    // An answer the killed replica had begun to send cannot be finished by anyone: nginx passes
    // on what it got and the body breaks off (seen once in CI). Its upload is stored whole or not
    // at all (counted below with the unanswered ones), and sending it again is safe.
    if (opts.killed && o.kind === "upload" && o.status === "cut off") return false;
    return o.status !== 503 || !o.retryAfter || o.from === "unknown";
  });
  assert.deepEqual(bad, [], table);
  assert.ok(outcomes.some((o) => o.after && o.kind === "upload" && o.status === 201), table);

  const { db } = cluster;
  const rows = new Set(
    (await db.sql<{ short_id: string }[]>`select short_id from images`).map((r) => r.short_id),
  );
  const deleted = outcomes.filter((o) => o.kind === "delete").map((o) => o.shortId!);
  assert.ok(deleted.length > 0, "the load deleted images");
  for (const shortId of deleted) assert.ok(!rows.has(shortId), `${shortId} survived its delete`);
  for (const [shortId, bytes] of uploads) {
    if (deleted.includes(shortId)) continue;
    const { res } = await cluster.call(`/api/v1/images/${shortId}/file`);
    assert.equal(res.status, 200, `${shortId} was acknowledged`);
    assert.deepEqual(new Uint8Array(await res.arrayBuffer()), bytes, shortId);
  }
  // The load's own uploads carry the tag "load"; the tests check their other uploads themselves.
  const loadRows = await db.sql<{ short_id: string }[]>`
    select i.short_id from images i join image_tags it on it.image_id = i.id
    join tags t on t.id = it.tag_id where t.name = 'load'`;
  const untold = loadRows.map((r) => r.short_id)
    .filter((id) => !uploads.has(id) && !opts.rowsBefore.has(id));
  const unanswered =
    outcomes.filter((o) => o.kind === "upload" && (o.from === "nginx" || o.status === "cut off"))
      .length;
  assert.ok(
    untold.length <= (opts.killed ? unanswered : 0),
    `${untold.length} rows nobody was told about, ${unanswered} uploads unanswered`,
  );
  await assertBucketMatchesTables(cluster);
}
