/**
 * Replicas of the service (main.ts, each a process of its own, with the start task's
 * permissions) on one database and one bucket, behind Debian's nginx running the README's nginx
 * block; and requests through nginx that can tell which replica answered. Every request carries
 * an X-Request-Id of its own, and each replica logs the ids it served.
 */
import assert from "node:assert/strict";
import { TEST_PASSWORD } from "./app.ts";
import { childEnv, type ChildService, spawnService, startArgs } from "./child.ts";
import { type FreshDatabase, freshDatabase } from "./db.ts";
import { uploadForm } from "./images.ts";
import {
  NGINX_ADDRESS,
  pointBlockAt,
  readmeNginxBlock,
  startNginx,
  type TestNginx,
} from "./nginx.ts";
import { disposeS3, startS3, type TestS3 } from "./s3.ts";
import { statFields } from "./threads.ts";
import { sleep, until } from "./waits.ts";

/** An answer through nginx, and the request id it was sent with. */
export interface Sent {
  res: Response;
  id: string;
}

/** A request as a replica logged it. */
export interface Served {
  replica: string;
  status: number;
}

/**
 * One replica: its port, the kernel's choice at its first start and kept for restarts (nginx
 * knows it), and its process while it runs.
 */
export class Replica {
  port = 0;
  child: ChildService | null = null;
  /** Requests it has logged. */
  served = 0;
  /** Its other log lines, each with the number of requests it had logged before. */
  #lines: { entry: Record<string, unknown>; servedBefore: number }[] = [];

  constructor(
    readonly name: string,
    private readonly env: Record<string, string>,
    private readonly onServed: (id: string, served: Served) => void,
  ) {}

  /** Starts the process and waits until its health answers 200. */
  async start() {
    for (let attempt = 1;; attempt++) {
      this.#lines = [];
      try {
        this.child = await spawnService(await startArgs(), {
          ...this.env,
          PORT: String(this.port),
        }, { onLine: (line) => this.#log(line) });
        this.port = this.child.port;
        return;
      } catch (e) {
        // A restart binds the port nginx knows; another process may hold it for a moment (a
        // connection's local port): try again, a few times, before failing.
        if (!this.port || attempt >= 5 || !/AddrInUse/.test(String(e))) throw e;
        await sleep(500);
      }
    }
  }

  /** True while its process is stopped by a signal (SIGSTOP): state T in /proc. */
  async frozen(): Promise<boolean> {
    if (!this.child?.alive()) return false;
    const stat = await Deno.readTextFile(`/proc/${this.child.pid}/stat`).catch(() => "");
    return statFields(stat)[0] === "T";
  }

  /** Its log line of `msg`, parsed, if it wrote one. */
  logged(msg: string): Record<string, unknown> | undefined {
    return this.#lines.find((l) => l.entry.msg === msg)?.entry;
  }

  /** How many requests it logged after its line of `msg`. */
  servedAfter(msg: string): number {
    const line = this.#lines.find((l) => l.entry.msg === msg);
    if (!line) throw new Error(`${this.name} never logged "${msg}"`);
    return this.served - line.servedBefore;
  }

  #log(line: string) {
    if (!line.startsWith("{")) return;
    const entry = JSON.parse(line);
    if (entry.msg === "request" && typeof entry.request_id === "string") {
      this.served++;
      this.onServed(entry.request_id, { replica: this.name, status: entry.status });
    } else {
      this.#lines.push({ entry, servedBefore: this.served });
    }
  }
}

/** Replicas behind nginx, on a fresh database and s3rver. */
export class Cluster {
  /** Requests sent so far. */
  requests = 0;

  private constructor(
    readonly db: FreshDatabase,
    readonly s3: TestS3,
    readonly replicas: Replica[],
    readonly nginx: TestNginx,
    /** The detail of nginx's own 503 (the README's `@unavailable`). */
    readonly nginxDetail: string,
    /** Request id -> the replica that logged it, and the status it logged. */
    private readonly served: Map<string, Served>,
  ) {}

  /** Starts `names.length` replicas with `env` and nginx in front; `close()` stops it all. */
  static async start(names: string[], env: Record<string, string>): Promise<Cluster> {
    const db = await freshDatabase();
    const s3 = await startS3();
    const served = new Map<string, Served>();
    const replicaEnv = childEnv(db, s3, {
      LOG_LEVEL: "info",
      LOGIN_TRUSTED_PROXY_IPS: NGINX_ADDRESS,
      ...env,
    });
    const replicas = names.map((n) => new Replica(n, replicaEnv, (id, r) => served.set(id, r)));
    let nginx: TestNginx | undefined;
    try {
      await Promise.all(replicas.map((r) => r.start()));
      const block = await readmeNginxBlock();
      const upstreams = replicas.map((r) => `127.0.0.1:${r.port}`);
      nginx = await startNginx((port) => pointBlockAt(block, upstreams, port), "/api/v1/health");
      const detail = JSON.parse(/return 503 '(.*)';/.exec(block)![1]).detail;
      return new Cluster(db, s3, replicas, nginx, detail, served);
    } catch (e) {
      await nginx?.stop();
      await Promise.all(replicas.map((r) => r.child?.stop()));
      await disposeS3(s3);
      await db.drop();
      throw e;
    }
  }

  /** Stops nginx and the replicas, then s3rver and the database. */
  async close() {
    await this.nginx.stop();
    await Promise.all(this.replicas.map((r) => r.child?.stop()));
    await disposeS3(this.s3);
    await this.db.drop();
  }

  /** A request through nginx under a request id of its own. */
  async call(path: string, init: RequestInit = {}): Promise<Sent> {
    const id = `t${++this.requests}-${crypto.randomUUID().slice(0, 8)}`;
    const headers = new Headers(init.headers);
    headers.set("x-request-id", id);
    const res = await fetch(`${this.nginx.base}${path}`, {
      ...init,
      headers,
      signal: AbortSignal.timeout(30_000),
    });
    return { res, id };
  }

  /** The replica that logged request `id` and the status it answered, if one did (yet). */
  logged(id: string): Served | undefined {
    return this.served.get(id);
  }

  /** The replica that served request `id`: its log line follows the answer by a moment. */
  async servedBy(id: string): Promise<string> {
    await until(`a replica logging request ${id}`, () => this.served.has(id), 10_000);
    return this.served.get(id)!.replica;
  }

  /** Signs in through nginx; the bearer header. */
  async signIn(): Promise<Record<string, string>> {
    const { res } = await this.call("/api/v1/auth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "admin", password: TEST_PASSWORD }),
    });
    assert.equal(res.status, 200, await res.clone().text());
    return { authorization: `Bearer ${(await res.json()).access_token}` };
  }

  /** An upload through nginx. */
  upload(auth: Record<string, string>, bytes: Uint8Array, tags: string[] = []): Promise<Sent> {
    const body = uploadForm(bytes, tags);
    return this.call("/api/v1/images", { method: "POST", headers: auth, body });
  }

  /**
   * Sends `request` until every replica has answered it, handing each answer to `check`. nginx
   * takes turns, so with two replicas that is usually two requests.
   */
  async onEachReplica(
    request: () => Promise<Sent>,
    check: (res: Response, replica: string) => Promise<void>,
  ): Promise<void> {
    const seen = new Set<string>();
    for (let i = 0; i < 5 * this.replicas.length && seen.size < this.replicas.length; i++) {
      const { res, id } = await request();
      const replica = await this.servedBy(id);
      await check(res, replica);
      seen.add(replica);
    }
    assert.equal(seen.size, this.replicas.length, `only ${[...seen]} answered`);
  }

  /**
   * Starts the replicas that are down, and waits until nginx sends requests to every one. A
   * replica left frozen (SIGSTOP) by a test that failed is stopped and started again: nginx would
   * otherwise hold every request it gives it, and each later test would time out.
   */
  async allInRotation() {
    const frozen = await Promise.all(this.replicas.map((r) => r.frozen()));
    // stop() ends a frozen process too: its SIGTERM waits, the SIGKILL after the grace does not.
    const stopping = this.replicas.filter((r, i) => frozen[i] || r.logged("shutting down"));
    await Promise.all(stopping.map((r) => r.child?.stop()));
    await Promise.all(this.replicas.filter((r) => !r.child?.alive()).map((r) => r.start()));
    // nginx leaves a replica that failed alone for `fail_timeout`.
    for (const replica of this.replicas) {
      await until(`nginx sending requests to ${replica.name}`, async () => {
        const { res, id } = await this.call("/api/v1/health");
        await res.body?.cancel();
        if (await this.servedBy(id) === replica.name) return true;
        await sleep(200);
        return false;
      });
    }
  }
}
