/**
 * Runs `fn` over the items of an async iterable with at most `concurrency` in flight, pulling an
 * item only when a slot is free: a collection of any size is held one item per slot, never all.
 */
export async function forEachConcurrent<T>(
  items: AsyncIterable<T> | Iterable<T>,
  concurrency: number,
  fn: (item: T) => Promise<void>,
): Promise<void> {
  const iterator = Symbol.asyncIterator in items
    ? (items as AsyncIterable<T>)[Symbol.asyncIterator]()
    : (items as Iterable<T>)[Symbol.iterator]();
  let stop = false;
  // Async generators queue concurrent next() calls, so slots share one iterator safely.
  const slot = async () => {
    while (!stop) {
      const { value, done } = await iterator.next();
      if (done) return;
      await fn(value);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, concurrency) }, slot));
  } catch (e) {
    stop = true;
    throw e;
  }
}
