/**
 * A bounded least-recently-used cache of small stored objects, by storage key, for the byte
 * routes. A reaction image pasted into a chat is fetched by every client in the channel within
 * seconds, so the hot set is small and hit again and again; from memory the service answers
 * without a round trip to S3 (bench B4).
 *
 * Safe because an object never changes under its key: keys are made per upload, and the routes
 * look the image's row up before they look here, so a deleted image is a 404 before its cached
 * bytes could be served.
 */
export class ByteCache {
  #entries = new Map<string, Uint8Array<ArrayBuffer>>();
  #bytes = 0;

  /**
   * @param maxBytes the most bytes held in all (0 disables the cache)
   * @param maxObjectBytes larger objects are never held (they stream from storage)
   */
  constructor(readonly maxBytes: number, readonly maxObjectBytes: number) {}

  /** Bytes held now. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Whether an object of `length` bytes would be held. */
  accepts(length: number): boolean {
    return length <= this.maxObjectBytes && length <= this.maxBytes;
  }

  /** The bytes under `key`, now the most recently used; undefined when not held. */
  get(key: string): Uint8Array<ArrayBuffer> | undefined {
    const hit = this.#entries.get(key);
    if (hit) {
      this.#entries.delete(key);
      this.#entries.set(key, hit);
    }
    return hit;
  }

  /** Holds `bytes` under `key` (unless too large), dropping the least recently used to fit. */
  set(key: string, bytes: Uint8Array<ArrayBuffer>): void {
    if (!this.accepts(bytes.length)) return;
    this.delete(key);
    this.#entries.set(key, bytes);
    this.#bytes += bytes.length;
    for (const [oldest, held] of this.#entries) {
      if (this.#bytes <= this.maxBytes) break;
      this.#entries.delete(oldest);
      this.#bytes -= held.length;
    }
  }

  /** Forgets `key`. */
  delete(key: string): void {
    const held = this.#entries.get(key);
    if (!held) return;
    this.#entries.delete(key);
    this.#bytes -= held.length;
  }
}
