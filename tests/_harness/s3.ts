/**
 * An s3rver (the S3-protocol server installable here) on a random loopback port, with one
 * bucket. It only accepts the credentials S3RVER/S3RVER. `startS3` runs it in this process;
 * `startS3Process` (s3_process.ts) runs it in a child process that a test can freeze, and the
 * benchmarks run it there so that neither the service nor the load generator pays for it.
 */
import S3rver from "npm:s3rver@3.7.1";
import { type S3Settings, S3Store } from "../../adapters/storage/s3.ts";

/** A running s3rver and a store on its bucket. */
export interface TestS3 {
  settings: S3Settings;
  /** The bucket's name (also `settings.bucket`). */
  bucket: string;
  store: S3Store;
  endpoint: string;
  port: number;
  /** The folder s3rver keeps its objects in. */
  dir: string;
  stop(): Promise<void>;
  /** Starts it again on the same port and folder (after `stop`), for outage tests. */
  restart(): Promise<void>;
}

/** The settings of `bucket` on the s3rver at `endpoint`, with the credentials s3rver accepts. */
export function s3rverSettings(
  s3: { endpoint: string; bucket: string },
  timeoutMs?: number,
): S3Settings {
  return {
    bucket: s3.bucket,
    endpoint: s3.endpoint,
    region: "us-east-1",
    accessKeyId: "S3RVER",
    secretAccessKey: "S3RVER",
    forcePathStyle: true,
    timeoutMs,
  };
}

/** A new store on `bucket` of the s3rver at `endpoint` (its own connections). */
export function s3rverStore(s3: { endpoint: string; bucket: string }, timeoutMs?: number): S3Store {
  return new S3Store(s3rverSettings(s3, timeoutMs));
}

/** The settings and store of a bucket on the s3rver at `port`. */
export function s3rverBucket(port: number, bucket: string, timeoutMs?: number) {
  const endpoint = `http://127.0.0.1:${port}`;
  const settings = s3rverSettings({ endpoint, bucket }, timeoutMs);
  return { endpoint, bucket, settings, store: new S3Store(settings) };
}

/** An s3rver (not yet running) with bucket `bucket`, its objects in the folder `dir`. */
export function newS3rver(port: number, dir: string, bucket: string): S3rver {
  const server = new S3rver({
    port,
    address: "127.0.0.1",
    silent: true,
    directory: dir,
    configureBuckets: [{ name: bucket, configs: [] }],
  });
  keepFolders(server);
  return server;
}

/**
 * s3rver's filesystem store keeps a key's folders as directories, and its delete removes the ones
 * it leaves empty. A put that made the directory a moment before then cannot open its file, and
 * that error escapes s3rver uncaught after it answered 200: the object is lost. S3 has no
 * folders, so here a delete removes the object's own files only, and folders stay.
 * Evidence: s3_folders_test.ts.
 */
function keepFolders(server: S3rver): void {
  const store = (server as unknown as { store: FilesystemStore }).store;
  store.deleteObject = async (bucket, key) => {
    await Promise.all(
      ["object", "object.md5", "metadata.json"].map((part) =>
        Deno.remove(store.getResourcePath(bucket, key, part)).catch((e) => {
          if (!(e instanceof Deno.errors.NotFound)) throw e;
        })
      ),
    );
  };
}

/** What keepFolders uses of s3rver's filesystem store (lib/stores/filesystem.js). */
interface FilesystemStore {
  getResourcePath(bucket: string, key: string, part: string): string;
  deleteObject(bucket: string, key: string): Promise<void>;
}

/** Starts s3rver with bucket `bucket` in a temporary folder. */
export async function startS3(bucket = "board"): Promise<TestS3> {
  const dir = await Deno.makeTempDir({ prefix: "board-s3-" });
  const make = (port: number) => newS3rver(port, dir, bucket);
  let server = make(0);
  const { port } = await server.run();
  let running = true;
  return {
    ...s3rverBucket(port, bucket),
    port,
    dir,
    stop: async () => {
      if (running) {
        // Idle keep-alive connections of the store's HTTP client would hold close() for minutes
        // (measured: 178 s after images_test's concurrent writes, run alone).
        (server as unknown as { httpServer?: { closeAllConnections?(): void } }).httpServer
          ?.closeAllConnections?.();
        await server.close();
      }
      running = false;
    },
    restart: async () => {
      server = make(port);
      await server.run();
      running = true;
    },
  };
}

/**
 * Removes s3rver's folder and stops it. The folder goes first, synchronously, so that an
 * `unload` handler (which cannot wait for the stop) still removes it.
 */
export async function disposeS3(s3: TestS3): Promise<void> {
  try {
    Deno.removeSync(s3.dir, { recursive: true });
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  await s3.stop();
}
