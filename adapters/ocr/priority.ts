/**
 * The OCR process's priority switch. Its own folder: the process may read only this folder and
 * the npm packages (engine.ts `ocrCommand`).
 *
 * @module
 */

/** The argument that tells the OCR process and its thread to keep their priority (engine.ts). */
export const NO_NICE_ARG = "--no-nice";

/** Whether this OCR process lowers its threads to nice 19: unless started with NO_NICE_ARG. */
export function lowersPriority(args: readonly string[] = Deno.args): boolean {
  return !args.includes(NO_NICE_ARG);
}
