/**
 * AWS Signature Version 4 for S3 requests, signed in the Authorization header. It follows
 * "Authenticating Requests: Using the Authorization Header" of the S3 API reference; the tests
 * check it against that page's worked examples and against s3rver, which verifies signatures.
 */
import { createHmac } from "node:crypto";
import { sha256Hex } from "../../domain/hash.ts";

/** An access key pair, with the session token of temporary credentials. */
export interface Credentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

/** What is signed: the request as it will be sent. */
export interface SignInput {
  method: string;
  url: URL;
  /** Headers to send (and sign, but see signRequest), beside the ones the signer adds; any case. */
  headers: Record<string, string>;
  /** Hex SHA-256 of the body, or `UNSIGNED-PAYLOAD`. */
  payloadHash: string;
  region: string;
  credentials: Credentials;
  /** The signing time; defaults to now. */
  date?: Date;
}

/**
 * RFC 3986 encoding as S3 wants it: everything but `A-Z a-z 0-9 - _ . ~` is percent-encoded,
 * and `/` too unless `keepSlash` (object keys in a path). The AWS SDK's S3 client encodes each
 * segment of a key so; adapters/storage/s3_test.ts compares the paths the two send.
 */
export function uriEncode(value: string, keepSlash = false): string {
  const encoded = encodeURIComponent(value).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return keepSlash ? encoded.replaceAll("%2F", "/") : encoded;
}

/** `20130524T000000Z`. */
function amzDate(date: Date): string {
  return date.toISOString().replace(/[-:]/g, "").replace(/\.\d{3}/, "");
}

/** The signing key of a day, region and service; it changes once a day, so it is cached. */
const signingKeys = new Map<string, Buffer>();

function signingKey(secret: string, day: string, region: string): Buffer {
  const id = `${day}/${region}/${secret}`;
  let key = signingKeys.get(id);
  if (!key) {
    const kDate = createHmac("sha256", `AWS4${secret}`).update(day).digest();
    const kRegion = createHmac("sha256", kDate).update(region).digest();
    const kService = createHmac("sha256", kRegion).update("s3").digest();
    key = createHmac("sha256", kService).update("aws4_request").digest();
    if (signingKeys.size >= 16) signingKeys.clear();
    signingKeys.set(id, key);
  }
  return key;
}

/** The canonical query string: pairs encoded, sorted by name then value. */
function canonicalQuery(params: URLSearchParams): string {
  return [...params]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort(([a, x], [b, y]) => a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0)
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

/**
 * Headers sent but never signed, as the AWS SDK's signer (@smithy/signature-v4) leaves them out:
 * hop-by-hop and client headers that a proxy on the way may add, drop or rewrite, after which a
 * signature over them would no longer verify. So are `proxy-*` and `sec-*`.
 */
const UNSIGNED_HEADERS = new Set([
  "authorization",
  "cache-control",
  "connection",
  "expect",
  "from",
  "keep-alive",
  "max-forwards",
  "pragma",
  "referer",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "user-agent",
  "x-amzn-trace-id",
]);

const signable = (name: string) =>
  !UNSIGNED_HEADERS.has(name) && !name.startsWith("proxy-") && !name.startsWith("sec-");

/**
 * The headers to send, `Authorization` included: the input's, plus `host`, `x-amz-date`,
 * `x-amz-content-sha256` and, for temporary credentials, `x-amz-security-token`. All are signed
 * but UNSIGNED_HEADERS and `proxy-*`/`sec-*`. The URL's path must already be encoded as it goes on
 * the wire.
 */
export function signRequest(input: SignInput): Record<string, string> {
  const { credentials, region } = input;
  const stamp = amzDate(input.date ?? new Date());
  const day = stamp.slice(0, 8);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(input.headers)) {
    headers[name.toLowerCase()] = value.trim().replace(/\s+/g, " ");
  }
  headers["host"] = input.url.host;
  headers["x-amz-date"] = stamp;
  headers["x-amz-content-sha256"] = input.payloadHash;
  if (credentials.sessionToken) headers["x-amz-security-token"] = credentials.sessionToken;

  const names = Object.keys(headers).filter(signable).sort();
  const signedHeaders = names.join(";");
  const canonicalRequest = [
    input.method,
    input.url.pathname,
    canonicalQuery(input.url.searchParams),
    names.map((n) => `${n}:${headers[n]}\n`).join(""),
    signedHeaders,
    input.payloadHash,
  ].join("\n");
  const scope = `${day}/${region}/s3/aws4_request`;
  const stringToSign = ["AWS4-HMAC-SHA256", stamp, scope, sha256Hex(canonicalRequest)].join("\n");
  const signature = createHmac("sha256", signingKey(credentials.secretAccessKey, day, region))
    .update(stringToSign)
    .digest("hex");
  headers["authorization"] = `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope},` +
    `SignedHeaders=${signedHeaders},Signature=${signature}`;
  return headers;
}
