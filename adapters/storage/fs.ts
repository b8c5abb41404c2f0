/**
 * The filesystem implementation of ObjectStore, for the embedded default. Writes are atomic
 * (temporary file, then rename) and keys can never escape the store's folder.
 */
import { join, resolve, sep } from "node:path";
import type { ByteRange, ObjectBody, ObjectInfo, ObjectStore, PutOptions } from "./object_store.ts";
import { RangeNotSatisfiableError, StorageError } from "./object_store.ts";

const SEGMENT = /^[A-Za-z0-9_-][A-Za-z0-9._-]*$/;

/** An ObjectStore in a local folder: objects under `objects/`, content types under `meta/`. */
export class FsStore implements ObjectStore {
  readonly root: string;

  constructor(root: string) {
    this.root = resolve(root);
  }

  /** The path of `key` under `tree`, refusing anything that could leave the folder. */
  private path(tree: "objects" | "meta", key: string): string {
    const parts = key.split("/");
    if (key.length > 512 || !parts.every((p) => SEGMENT.test(p) && p !== "." && p !== "..")) {
      throw new StorageError(`invalid object key ${JSON.stringify(key)}`);
    }
    const base = join(this.root, tree);
    const full = resolve(base, ...parts);
    if (!full.startsWith(base + sep)) throw new StorageError("object key escapes the store");
    return full;
  }

  private async writeAtomic(path: string, data: ReadableStream<Uint8Array> | Uint8Array) {
    await Deno.mkdir(join(path, ".."), { recursive: true });
    const tmp = `${path}.${crypto.randomUUID()}.tmp`;
    try {
      if (data instanceof Uint8Array) await Deno.writeFile(tmp, data);
      else await Deno.writeFile(tmp, data);
      await Deno.rename(tmp, path);
    } catch (e) {
      await Deno.remove(tmp).catch(() => {});
      throw e;
    }
  }

  private async wrap<T>(what: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof StorageError || e instanceof RangeNotSatisfiableError) throw e;
      throw new StorageError(`filesystem ${what} failed: ${(e as Error).message}`, { cause: e });
    }
  }

  put(key: string, body: ReadableStream<Uint8Array> | Uint8Array, opts: PutOptions) {
    return this.wrap("put", async () => {
      const meta = new TextEncoder().encode(JSON.stringify({ contentType: opts.contentType }));
      await this.writeAtomic(this.path("meta", key), meta);
      await this.writeAtomic(this.path("objects", key), body);
    });
  }

  private async contentType(key: string): Promise<string> {
    try {
      return JSON.parse(await Deno.readTextFile(this.path("meta", key))).contentType;
    } catch {
      return "application/octet-stream";
    }
  }

  get(key: string, range?: ByteRange): Promise<ObjectBody | null> {
    return this.wrap("get", async () => {
      let file: Deno.FsFile;
      try {
        file = await Deno.open(this.path("objects", key));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      }
      try {
        const size = (await file.stat()).size;
        const contentType = await this.contentType(key);
        if (!range) return { body: file.readable, length: size, size, contentType };
        if (range.start >= size || range.start > range.end) throw new RangeNotSatisfiableError(key);
        const end = Math.min(range.end, size - 1);
        await file.seek(range.start, Deno.SeekMode.Start);
        let left = end - range.start + 1;
        const length = left;
        const body = file.readable.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, ctl) {
              if (left <= 0) return;
              const part = chunk.subarray(0, Math.min(chunk.length, left));
              left -= part.length;
              ctl.enqueue(part);
              if (left <= 0) ctl.terminate();
            },
          }),
        );
        return { body, length, size, contentType };
      } catch (e) {
        file.close();
        throw e;
      }
    });
  }

  head(key: string): Promise<ObjectInfo | null> {
    return this.wrap("head", async () => {
      try {
        const st = await Deno.stat(this.path("objects", key));
        return { size: st.size, contentType: await this.contentType(key) };
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return null;
        throw e;
      }
    });
  }

  copy(from: string, to: string) {
    return this.wrap("copy", async () => {
      const src = await this.get(from);
      if (!src) throw new StorageError(`copy source ${from} does not exist`);
      // A file's length is always known.
      await this.put(to, src.body, { contentLength: src.length!, contentType: src.contentType });
    });
  }

  delete(key: string) {
    return this.wrap("delete", async () => {
      for (const tree of ["objects", "meta"] as const) {
        await Deno.remove(this.path(tree, key)).catch((e) => {
          if (!(e instanceof Deno.errors.NotFound)) throw e;
        });
      }
    });
  }

  async *list(prefix: string): AsyncIterable<string> {
    const base = join(this.root, "objects");
    async function* walk(dir: string, rel: string): AsyncIterable<string> {
      let entries: Deno.DirEntry[] = [];
      try {
        entries = await Array.fromAsync(Deno.readDir(dir));
      } catch (e) {
        if (e instanceof Deno.errors.NotFound) return;
        throw e;
      }
      for (const e of entries.sort((a, b) => a.name.localeCompare(b.name))) {
        const key = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory) yield* walk(join(dir, e.name), key);
        else if (!e.name.endsWith(".tmp") && key.startsWith(prefix)) yield key;
      }
    }
    yield* walk(base, "");
  }

  check() {
    return this.wrap("health check", async () => {
      await Deno.mkdir(join(this.root, "objects"), { recursive: true });
      await Deno.stat(join(this.root, "objects"));
    });
  }
}
