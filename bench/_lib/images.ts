/**
 * Photo-like JPEGs of the benchmarks, generated once and then read from `bench/results/cache/`.
 *
 * @module
 */
import { photoJpeg } from "../../tests/_harness/photos.ts";
import { RESULTS_DIR } from "./results.ts";
import { randomHex } from "./stats.ts";

/**
 * `photoJpeg(width, height, seed)`, generated once and then read from `bench/results/cache/`
 * (12 MP takes about a second of CPU to make; B3 needs twenty).
 */
export async function cachedPhotoJpeg(
  width: number,
  height: number,
  seed: number,
): Promise<Uint8Array> {
  const dir = new URL("./cache/", RESULTS_DIR);
  const file = new URL(`photo-${width}x${height}-${seed}.jpg`, dir);
  try {
    return await Deno.readFile(file);
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const jpeg = await photoJpeg(width, height, seed);
  await Deno.mkdir(dir, { recursive: true });
  // Written aside and renamed, so a run stopped half-way never leaves a truncated file.
  const part = new URL(`${file.pathname}.${randomHex()}.part`, file);
  await Deno.writeFile(part, jpeg);
  await Deno.rename(part, file);
  return jpeg;
}
