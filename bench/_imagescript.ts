/**
 * B1 helper: imagescript 1.3.1 thumbnails of the files named in the arguments (`name=path`),
 * each timed `IMAGESCRIPT_RUNS` times; prints `{"name": [ms...]}` or `{"name": "error"}`.
 *
 * Run by b1_thumbnails.ts with `--no-config --no-lock --node-modules-dir=none`: imagescript is a
 * baseline, not a dependency, so it must touch neither deno.lock nor the shared node_modules.
 * The specifier is computed so that `deno check` does not resolve it either.
 */

/** The parts of imagescript 1.3.1 used here. */
interface ImageScriptImage {
  contain(width: number, height: number): unknown;
  encodeWEBP(quality: number): Promise<Uint8Array>;
}
interface ImageScript {
  Image: abstract new (...args: never[]) => ImageScriptImage;
  decode(bytes: Uint8Array, firstFrameOnly?: boolean): Promise<unknown>;
}

const IMAGESCRIPT = ["npm:imagescript", "1.3.1"].join("@");
const mod = (await import(IMAGESCRIPT)) as ImageScript;

/** Decode (first frame), resize to fit 400x400, encode WebP at quality 80. */
async function thumbnail(bytes: Uint8Array) {
  const decoded = await mod.decode(bytes, true);
  const image = decoded instanceof mod.Image ? decoded : (decoded as ImageScriptImage[])[0];
  image.contain(400, 400);
  return await image.encodeWEBP(80);
}

const runs = Number(Deno.env.get("IMAGESCRIPT_RUNS") ?? "2");
const out: Record<string, number[] | string> = {};
for (const arg of Deno.args) {
  const [name, path] = arg.split("=");
  const bytes = await Deno.readFile(path);
  try {
    const times: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t0 = performance.now();
      await thumbnail(bytes);
      times.push(performance.now() - t0);
    }
    out[name] = times;
  } catch (e) {
    out[name] = String((e as Error)?.message ?? e);
  }
}
console.log(JSON.stringify(out));
