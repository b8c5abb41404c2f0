/** Start-up failures that are the operator's to fix: printed as a message, not a stack trace. */

/** A start-up failure with a message that says what to change. */
export class StartupError extends Error {
  override name = "StartupError";
}

/** Runs a start-up step; a StartupError prints its message and ends the process with 1. */
export async function orExit<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    if (!(e instanceof StartupError)) throw e;
    console.error(e.message);
    Deno.exit(1);
  }
}
