/**
 * The object store interface shared by the S3 and filesystem implementations. Keys come only
 * from `domain/storage_keys.ts`. Failures of the backend surface as StorageError (the API answers 503).
 */
import { AppError } from "../../domain/errors.ts";

/** What a HEAD returns. */
export interface ObjectInfo {
  /** The object's size in bytes; null when the server did not say. */
  size: number | null;
  contentType: string;
}

/** An inclusive byte range, like HTTP's `Range: bytes=start-end`. */
export interface ByteRange {
  start: number;
  end: number;
}

/** A streamed object (or a slice of it when a range was asked for). */
export interface ObjectBody extends ObjectInfo {
  body: ReadableStream<Uint8Array>;
  /** Bytes in `body`: the whole size, or the range length; null when the server did not say. */
  length: number | null;
}

/** Options of a put. */
export interface PutOptions {
  contentLength: number;
  contentType: string;
  /** SHA-256 of the body, hex, when the caller already has it (S3 then need not hash it). */
  sha256?: string;
}

/** An S3-like object store. */
export interface ObjectStore {
  /** Stores `body` at `key`, replacing what was there. */
  put(key: string, body: ReadableStream<Uint8Array> | Uint8Array, opts: PutOptions): Promise<void>;
  /** The object at `key` as a stream, or null when there is none. */
  get(key: string, range?: ByteRange): Promise<ObjectBody | null>;
  /** Size and type of the object at `key`, or null when there is none. */
  head(key: string): Promise<ObjectInfo | null>;
  /** Copies an object server-side. Throws StorageError when `from` is missing. */
  copy(from: string, to: string): Promise<void>;
  /** Removes the object; removing a missing object is not an error. */
  delete(key: string): Promise<void>;
  /** Every key under `prefix` (for consistency checks and tests). */
  list(prefix: string): AsyncIterable<string>;
  /** Resolves when the backend answers, rejects otherwise (health check). */
  check(signal?: AbortSignal): Promise<void>;
}

/** The backend failed or is unreachable; the message is for logs, never for clients. */
export class StorageError extends AppError {
  override name = "StorageError";
  constructor(message: string, options?: ErrorOptions) {
    super("storage_unavailable", message, { cause: options?.cause });
  }
}

/** Thrown by `get` when the asked range lies outside the object (`range_not_satisfiable`). */
export class RangeNotSatisfiableError extends AppError {
  override name = "RangeNotSatisfiableError";
  constructor(message = "The range lies outside the object") {
    super("range_not_satisfiable", message);
  }
}

/** Reads a whole stream into memory (only for small objects and tests). */
export async function readAll(
  stream: ReadableStream<Uint8Array>,
): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await new Response(stream).arrayBuffer());
}
