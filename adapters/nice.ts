/**
 * Whether FFmpeg and the OCR engines run at a low priority (nice 10/19: adapters/video/ffmpeg.ts,
 * adapters/ocr/engine.ts), as the service always does. `deno task test` sets TEST_NO_NICE=1
 * (tests/run.ts): with several test files at once on two cores, work at nice 19 got a core only
 * when every file's other work left one, so the files waiting on it held their places for
 * minutes and their hang guards came near (docs/testing.md). The tests of the priorities
 * themselves ask for them (`nice: true`; adapters/ocr/recognizer_test.ts,
 * adapters/video/ffmpeg_test.ts).
 *
 * @module
 */

/** The test-only variable: `1` runs FFmpeg and the OCR engines without `nice`. */
export const NO_NICE_VARIABLE = "TEST_NO_NICE";

/**
 * True unless TEST_NO_NICE is `1`; true also when the environment may not be read (a process
 * without --allow-env keeps the production behaviour).
 */
export function niceWanted(env: Pick<typeof Deno.env, "get"> = Deno.env): boolean {
  try {
    return env.get(NO_NICE_VARIABLE) !== "1";
  } catch {
    return true;
  }
}
