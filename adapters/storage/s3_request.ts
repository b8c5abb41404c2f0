/**
 * One S3 request as S3Store sends it: the bucket's URL, the key in the path, the signature,
 * one retry of a byte body, and a deadline that fails the request once the server makes no
 * progress for S3_TIMEOUT_SECONDS (`deadline.ts`).
 */
import { StorageError } from "./object_store.ts";
import { ProgressDeadline } from "./deadline.ts";
import { type Credentials, signRequest, uriEncode } from "./sigv4.ts";
import { errorCode } from "./s3_xml.ts";
import { EMPTY_SHA256 } from "../../domain/hash.ts";
import { sendBytes } from "./byte_put.ts";
import type { Config } from "../config.ts";

/** Connection settings of an S3 store. */
export interface S3Settings {
  bucket: string;
  endpoint?: string;
  region: string;
  accessKeyId?: string;
  secretAccessKey?: string;
  forcePathStyle: boolean;
  /** A request that makes no progress for this long fails (default 15 s). */
  timeoutMs?: number;
}

/** The S3 settings of a configuration that names a bucket. */
export function s3Settings(config: Config): S3Settings {
  return {
    bucket: config.S3_BUCKET!,
    endpoint: config.S3_ENDPOINT,
    region: config.S3_REGION,
    accessKeyId: config.S3_ACCESS_KEY_ID,
    secretAccessKey: config.S3_SECRET_ACCESS_KEY,
    forcePathStyle: config.S3_FORCE_PATH_STYLE,
    timeoutMs: config.S3_TIMEOUT_SECONDS * 1000,
  };
}

/** Where credentials come from: the configured pair, or the AWS SDK's default chain. */
function credentialSource(settings: S3Settings): () => Promise<Credentials> {
  const { accessKeyId, secretAccessKey } = settings;
  if (accessKeyId && secretAccessKey) {
    const fixed = Promise.resolve({ accessKeyId, secretAccessKey });
    return () => fixed;
  }
  // Environment, shared files, SSO, container and instance roles; the provider caches what it
  // finds and refreshes temporary credentials before they expire.
  let chain: Promise<() => Promise<Credentials>> | undefined;
  return async () => {
    chain ??= import("@aws-sdk/credential-provider-node").then((m) => m.defaultProvider());
    return await (await chain)();
  };
}

/**
 * The bucket's URL, no trailing slash: `{endpoint}/{bucket}` path-style, else the bucket as a
 * subdomain of the endpoint's host. Without an endpoint, AWS's regional one.
 */
export function bucketUrl(settings: S3Settings): string {
  const endpoint = new URL(settings.endpoint ?? `https://s3.${settings.region}.amazonaws.com`);
  const path = endpoint.pathname.replace(/\/+$/, "");
  return settings.forcePathStyle
    ? `${endpoint.origin}${path}/${uriEncode(settings.bucket)}`
    : `${endpoint.protocol}//${settings.bucket}.${endpoint.host}${path}`;
}

/**
 * An object key as it goes in the request path. A key that is empty, or has a `.` or `..`
 * segment, is refused: URL parsing (WHATWG, so fetch too) would resolve such a path to another
 * object, and the service's own keys (domain/storage_keys.ts) never have one.
 */
function keyPath(key: string): string {
  if (key === "" || key.split("/").some((s) => s === "." || s === "..")) {
    throw new StorageError(`S3 object key ${JSON.stringify(key)} cannot be addressed`);
  }
  return uriEncode(key, true);
}

/** A request body; a byte body can be sent again on a retry, a stream cannot. */
type Body = Uint8Array | ReadableStream<Uint8Array> | undefined;

/** What to send. */
export interface S3Request {
  method: "GET" | "HEAD" | "PUT" | "DELETE";
  key?: string;
  query?: Record<string, string | undefined>;
  headers?: Record<string, string>;
  body?: Body;
  payloadHash?: string;
  signal?: AbortSignal;
}

/** Statuses worth one more attempt: S3's "slow down" and transient server errors. */
const RETRYABLE = new Set([429, 500, 502, 503, 504]);
const MAX_ATTEMPTS = 2;
const DEFAULT_TIMEOUT_MS = 15_000;
/**
 * fetch does not tell how far a body held in memory has been sent, so a put of one gets its
 * deadline plus the time it needs at this rate (1 MiB/s: 20 s more for a 20 MiB upload).
 */
const SLOWEST_SEND_BYTES_PER_MS = 1024 * 1024 / 1000;

/** A pause of 50 ms plus up to 100 ms at random before the retry, so replicas do not stampede. */
const backoff = () => new Promise((r) => setTimeout(r, 50 + Math.random() * 100));

/** A failed S3 response: its status and, when the body said, S3's error code. */
export class S3ResponseError extends Error {
  constructor(readonly status: number, readonly code: string | undefined) {
    super(`${status}${code ? ` ${code}` : ""}`);
  }
}

/** A successful S3 answer; its body is read under the request's deadline. */
export interface S3Answer {
  status: number;
  headers: Headers;
  body: ReadableStream<Uint8Array> | null;
}

/** A decimal header value, or null when it is absent or not a length. */
export function lengthHeader(value: string | null | undefined): number | null {
  return value && /^\d+$/.test(value.trim()) ? Number(value) : null;
}

/** Sends signed requests to one bucket. */
export class S3Requests {
  readonly #base: string;
  readonly #region: string;
  readonly #credentials: () => Promise<Credentials>;
  readonly #timeoutMs: number;

  constructor(settings: S3Settings) {
    this.#base = bucketUrl(settings);
    this.#region = settings.region;
    this.#credentials = credentialSource(settings);
    this.#timeoutMs = settings.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /**
   * Sends one signed request under a deadline; a non-2xx answer becomes S3ResponseError (its
   * body read). One retry, for a byte body only, unless the deadline or the caller aborted.
   */
  async send(what: string, req: S3Request): Promise<S3Answer> {
    // A bucket request goes to the bucket itself (`/bucket`, or `/` on its own host).
    const url = new URL(req.key === undefined ? this.#base : `${this.#base}/${keyPath(req.key)}`);
    const query = Object.entries(req.query ?? {}).filter((e): e is [string, string] =>
      e[1] !== undefined
    );
    url.search = query.map(([k, v]) => `${uriEncode(k)}=${uriEncode(v)}`).join("&");
    const replayable = !(req.body instanceof ReadableStream);
    for (let attempt = 1;; attempt++) {
      const headers = signRequest({
        method: req.method,
        url,
        headers: req.headers ?? {},
        payloadHash: req.payloadHash ?? EMPTY_SHA256,
        region: this.#region,
        credentials: await this.#credentials(),
      });
      delete headers["host"]; // fetch sets it from the URL, as signed
      const deadline = new ProgressDeadline(this.#timeoutMs, req.signal);
      const body = req.body instanceof ReadableStream ? deadline.watchRequest(req.body) : req.body;
      deadline.wait(
        req.body instanceof Uint8Array ? req.body.length / SLOWEST_SEND_BYTES_PER_MS : 0,
      );
      let res: Response;
      try {
        res = body instanceof Uint8Array && body.length > 0
          ? await sendBytes(url, req.method, headers, body, deadline.signal)
          : await fetch(url, {
            method: req.method,
            headers,
            body: body as BodyInit | undefined,
            signal: deadline.signal,
          });
      } catch (err) {
        deadline.end();
        if (deadline.signal.aborted) throw deadline.signal.reason;
        if (replayable && attempt < MAX_ATTEMPTS) {
          await backoff();
          continue;
        }
        throw err;
      }
      deadline.idle(); // the head is in; each read of the body waits anew
      if (!res.body) deadline.end();
      const answer = {
        status: res.status,
        headers: res.headers,
        body: res.body && deadline.watchResponse(res.body, what),
      };
      if (res.ok) return answer;
      const text = answer.body ? await new Response(answer.body).text().catch(() => "") : "";
      if (RETRYABLE.has(res.status) && replayable && attempt < MAX_ATTEMPTS) {
        await backoff();
        continue;
      }
      throw new S3ResponseError(res.status, errorCode(text));
    }
  }
}
