/** Bounded waits: a deadline on a promise, polling until a condition holds, a pause. */

/** Resolves like `p`, or rejects with a message naming `label` after `ms`. */
export async function within<T>(p: Promise<T> | T, ms: number, label: string): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      Promise.resolve(p),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${label}: no answer within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `ready` every `intervalMs` until it holds; throws naming `what` after `ms`. */
export async function until(
  what: string,
  ready: () => boolean | Promise<boolean>,
  ms = 30_000,
  intervalMs = 5,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await ready())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** Waits `ms`. */
export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
