/**
 * How many test files `deno task test` runs at once: Deno's DENO_JOBS, which `deno test
 * --parallel` reads (its default is one per core). FILES_PER_CORE files per core unless DENO_JOBS
 * is set. Two per core, for the files that mostly wait, made a quiet 2-core machine's whole run
 * slower (12m47s against 8m29s at one per core) and failed four tests whose bounds are generous
 * for one file per core (docs/testing.md), so the default stays at one.
 */

/** Deno's variable, kept when given. */
export const JOBS_VARIABLE = "DENO_JOBS";

/** Test files at once per core when DENO_JOBS is not set. */
export const FILES_PER_CORE = 1;

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
