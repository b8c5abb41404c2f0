/**
 * Results kept for as long as the database provably has not changed.
 *
 * Each lookup reads the database's current snapshot (`pg_current_snapshot()`: the oldest
 * running transaction, the next transaction ID, and the ones in progress). Any write assigns a
 * transaction ID, and any commit or abort takes one out of progress, so two equal snapshots mean
 * nothing was written in between: a result loaded after the first is exactly what a query at the
 * second would return. The snapshot is read before the result is loaded, so an entry is never
 * older than the snapshot it is stored under; a later write changes the snapshot, and the next
 * lookup loads again. This holds across processes and replicas, since they all ask the database.
 *
 * Concurrent lookups of the same key and snapshot share one load. Entries are evicted least
 * recently used first; a failed load is not kept. Cached values are shared: callers must not
 * modify them.
 */
export class SnapshotCache<T> {
  #entries = new Map<string, { snapshot: string; value: Promise<T> }>();

  /**
   * `snapshot()` reads the database's snapshot, before every load. `maxEntries` 0 keeps nothing:
   * every lookup loads, without reading the snapshot.
   */
  constructor(readonly maxEntries: number, private readonly snapshot: () => Promise<string>) {}

  /** The value of `key` now: kept from an earlier load at the current snapshot, or `load()`. */
  async get(key: string, load: () => Promise<T>): Promise<T> {
    if (this.maxEntries === 0) return await load();
    const snapshot = await this.snapshot();
    const kept = this.#entries.get(key);
    this.#entries.delete(key);
    if (kept?.snapshot === snapshot) {
      this.#entries.set(key, kept); // now the most recently used
      return await kept.value;
    }
    const entry = { snapshot, value: load() };
    this.#entries.set(key, entry);
    if (this.#entries.size > this.maxEntries) {
      this.#entries.delete(this.#entries.keys().next().value!);
    }
    entry.value.catch(() => {
      if (this.#entries.get(key) === entry) this.#entries.delete(key);
    });
    return await entry.value;
  }

  /** How many entries are kept. */
  get size(): number {
    return this.#entries.size;
  }
}
