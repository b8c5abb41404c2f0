/**
 * How many test files `deno task test` runs at once: Deno's DENO_JOBS, which `deno test
 * --parallel` reads (its default is one per core). Many files mostly wait (a child service's
 * start, FFmpeg, OCR engines, a real cooldown, a browser's page), and at one file per core the
 * two cores of the test machine were busy about half of a run (docs/testing.md); so the default
 * here is FILES_PER_CORE files per core, and DENO_JOBS, when set, is kept.
 */

/** Deno's variable, kept when given. */
export const JOBS_VARIABLE = "DENO_JOBS";

/** Test files at once per core when DENO_JOBS is not set. */
export const FILES_PER_CORE = 2;

/** The jobs to run with, or why the given value is refused. */
export type JobsChoice = { jobs: number; given: boolean } | { error: string };

/** `given` when it is a whole number from 1, else FILES_PER_CORE per core (at least 1 core). */
export function chooseJobs(given: string | undefined, cores: number): JobsChoice {
  const text = given?.trim();
  if (!text) return { jobs: FILES_PER_CORE * Math.max(1, cores), given: false };
  if (!/^\d{1,4}$/.test(text) || Number(text) < 1) {
    return { error: `${JOBS_VARIABLE} must be a whole number of at least 1, not "${text}".` };
  }
  return { jobs: Number(text), given: true };
}
