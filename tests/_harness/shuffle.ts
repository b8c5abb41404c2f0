/**
 * The order `deno task test` runs in: shuffled with a seed the run prints, so that a failure that
 * depends on order can be replayed (`TEST_SHUFFLE_SEED=<seed> deno task test`).
 */

/** The environment variable that replays a run's order. */
export const SEED_VARIABLE = "TEST_SHUFFLE_SEED";

/** The seed to run with, or why the given one is refused. */
export type SeedChoice = { seed: number; given: boolean } | { error: string };

/**
 * `given` (the variable's value) when it is a whole number from 0 to 2^31-1, else a random seed;
 * `null` when the arguments already say how to order (`--shuffle` given by hand).
 */
export function chooseShuffleSeed(
  given: string | undefined,
  args: readonly string[],
  random: () => number = Math.random,
): SeedChoice | null {
  if (args.some((a) => a === "--shuffle" || a.startsWith("--shuffle="))) return null;
  const text = given?.trim();
  if (!text) return { seed: Math.floor(random() * 2 ** 31), given: false };
  if (!/^\d{1,10}$/.test(text) || Number(text) >= 2 ** 31) {
    return {
      error: `${SEED_VARIABLE} must be a whole number from 0 to 2147483647, not "${text}".`,
    };
  }
  return { seed: Number(text), given: true };
}
