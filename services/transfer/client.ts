/**
 * The board's public API as the import and export tools use it, from Deno (the islands' client,
 * client/api_client.ts, is browser-only: localStorage, XMLHttpRequest, redirects to the login page).
 *
 * Every request has a deadline; 429, 502, 503, 504 and network errors are retried with
 * exponential back-off and jitter, honouring `Retry-After` (capped), a bounded number of times; a
 * 401 signs in again once (a long import can outlive its token).
 */
import type { ImageDto, ImagePage } from "../../domain/types.ts";

/** An answer that was not a success, after any retries: its status and JSON body. */
export class BoardApiError extends Error {
  override name = "BoardApiError";
  constructor(readonly status: number, readonly body: Record<string, unknown> | null) {
    super(
      typeof body?.detail === "string"
        ? `${body.detail} (HTTP ${status})`
        : `the server answered HTTP ${status}`,
    );
  }
  /** The structured error's `code`, if any. */
  get code(): string | null {
    return typeof this.body?.code === "string" ? this.body.code : null;
  }
}

/** Statuses that mean "try again later". */
const RETRY_STATUSES = new Set([429, 502, 503, 504]);

/** Retry settings; the defaults bound one request's retries to a few minutes. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  attempts: number;
  /** The first back-off, doubled at each retry. */
  baseMs: number;
  /** No wait is longer than this, whatever `Retry-After` asks. */
  maxWaitMs: number;
  /**
   * Deadline of one attempt: for its answer's headers, then for each piece of its body (a large
   * download over a slow link takes as long as it needs while it makes progress).
   */
  timeoutMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = {
  attempts: 8,
  baseMs: 500,
  maxWaitMs: 60_000,
  timeoutMs: 120_000,
};

/** How long `Retry-After` asks to wait (seconds or an HTTP date), or null. */
export function retryAfterMs(header: string | null, now = Date.now()): number | null {
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - now);
}

/** The wait before retry number `retry` (0-based): `Retry-After` if given, else back-off. */
export function backoffMs(policy: RetryPolicy, retry: number, retryAfter: number | null): number {
  const wait = retryAfter ?? policy.baseMs * 2 ** retry * (0.5 + Math.random() / 2);
  return Math.min(policy.maxWaitMs, wait);
}

/** Options of a BoardClient. */
export interface BoardClientOptions {
  /** The board's address, e.g. `http://localhost:8000`. */
  url: string;
  credentials?: { username: string; password: string };
  /** A personal API key (`rb_...`), sent as the bearer value; no sign-in then. */
  apiKey?: string;
  retry?: Partial<RetryPolicy>;
  /** Waits between attempts (a test passes a recorder). */
  sleep?: (ms: number) => Promise<void>;
  /** Told of each retry, for the log. */
  onRetry?: (info: { status: number | null; waitMs: number; path: string }) => void;
}

/** A request body that can be produced again for a retry. */
export type BodyFactory = () => BodyInit | Promise<BodyInit>;

/** A request: `bodyBytes` (the body's size) extends the deadline for sending it. */
export interface BoardRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: BodyFactory;
  bodyBytes?: number;
}

/**
 * The slowest upload a deadline allows for (bytes per millisecond, 16 KB/s): sending a body is
 * given this much time on top of the deadline, so a large file over a slow link is not cut off.
 */
export const MIN_UPLOAD_BYTES_PER_MS = 16;

/** How long an attempt may wait for its answer: the deadline, plus time to send its body. */
export function answerDeadlineMs(policy: RetryPolicy, bodyBytes: number): number {
  return policy.timeoutMs + bodyBytes / MIN_UPLOAD_BYTES_PER_MS;
}

/** A client of the board's `/api/v1`. */
export class BoardClient {
  readonly base: string;
  readonly retry: RetryPolicy;
  #token: string | null = null;
  #opts: BoardClientOptions;

  constructor(opts: BoardClientOptions) {
    this.base = opts.url.replace(/\/+$/, "");
    this.retry = { ...DEFAULT_RETRY, ...opts.retry };
    this.#opts = opts;
    this.#token = opts.apiKey ?? null;
  }

  /**
   * Signs in with the credentials (with an API key, checks it: `GET /api/v1/me`); throws
   * BoardApiError when refused.
   */
  async login(): Promise<void> {
    if (this.#opts.apiKey) {
      await (await this.#send("/api/v1/me", {}, true)).body?.cancel();
      return;
    }
    const creds = this.#opts.credentials;
    if (!creds) throw new Error("no credentials to sign in with");
    const res = await this.#send("/api/v1/auth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: () => JSON.stringify(creds),
    }, false);
    const body = await res.json() as { access_token: string };
    this.#token = body.access_token;
  }

  /**
   * Sends a request (retried as the policy says) and returns the successful response; anything
   * else is a BoardApiError. `body` is called again for each attempt.
   */
  request(
    path: string,
    init: BoardRequest = {},
  ): Promise<Response> {
    return this.#send(path, init, true);
  }

  /** GET as JSON. */
  async json<T>(path: string): Promise<T> {
    return await (await this.request(path)).json() as T;
  }

  async #send(
    path: string,
    init: BoardRequest,
    auth: boolean,
  ): Promise<Response> {
    const sleep = this.#opts.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    let signedInAgain = false;
    for (let attempt = 0;; attempt++) {
      const headers: Record<string, string> = { accept: "application/json", ...init.headers };
      if (auth && this.#token) headers.authorization = `Bearer ${this.#token}`;
      let res: Response | null = null;
      let failure: unknown = null;
      const abort = new AbortController();
      const deadline = answerDeadlineMs(this.retry, init.bodyBytes ?? 0);
      let timer = setTimeout(() => abort.abort(new Error("no answer in time")), deadline);
      try {
        res = await fetch(`${this.base}${path}`, {
          method: init.method ?? "GET",
          headers,
          body: init.body ? await init.body() : undefined,
          signal: abort.signal,
        });
      } catch (e) {
        failure = e;
      }
      clearTimeout(timer);
      if (res?.ok) {
        if (!res.body) return res;
        // Each piece of the body has the same deadline: a stalled download fails, a slow one runs.
        // The stream itself is failed: aborting the fetch alone, once its answer is in, sometimes
        // left the body waiting for the server (the test saw a 1 s deadline wait out a 10 s stall).
        const timeoutMs = this.retry.timeoutMs;
        let control: TransformStreamDefaultController<Uint8Array> | undefined;
        const stalled = () => {
          const err = new Error(`the body stalled for ${timeoutMs} ms`);
          control?.error(err);
          abort.abort(err);
        };
        timer = setTimeout(stalled, timeoutMs);
        const body = res.body.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            start: (c) => void (control = c),
            transform(chunk, controller) {
              clearTimeout(timer);
              timer = setTimeout(stalled, timeoutMs);
              controller.enqueue(chunk);
            },
            flush: () => clearTimeout(timer),
            cancel: () => clearTimeout(timer),
          }),
        );
        return new Response(body, { status: res.status, headers: res.headers });
      }
      if (res?.status === 401 && auth && this.#token && !signedInAgain && this.#opts.credentials) {
        await res.body?.cancel();
        signedInAgain = true;
        await this.login();
        attempt--;
        continue;
      }
      const retryable = res === null || RETRY_STATUSES.has(res.status);
      if (!retryable || attempt + 1 >= this.retry.attempts) {
        if (res === null) throw failure;
        const body = await res.json().catch(() => null) as Record<string, unknown> | null;
        throw new BoardApiError(res.status, body);
      }
      const waitMs = backoffMs(
        this.retry,
        attempt,
        retryAfterMs(res?.headers.get("retry-after") ?? null),
      );
      await res?.body?.cancel();
      this.#opts.onRetry?.({ status: res?.status ?? null, waitMs, path });
      await sleep(waitMs);
    }
  }
}

/** Every image, newest first, one page (of `limit`) at a time. */
export async function* listPages(client: BoardClient, limit = 200): AsyncGenerator<ImageDto[]> {
  let cursor: string | null = null;
  do {
    const query = `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`;
    const page: ImagePage = await client.json<ImagePage>(`/api/v1/images?${query}`);
    yield page.items;
    cursor = page.next_cursor;
  } while (cursor);
}
