/** `deno task build`: writes islands.gen.ts and bundles the client into _build/. */
import { buildAssets } from "../adapters/islands/build.ts";

const dev = Deno.args.includes("--dev");
const started = performance.now();
const manifest = await buildAssets({ dev });
const ms = Math.round(performance.now() - started);
console.log(
  `built ${Object.keys(manifest.islands).length} islands into _build/ in ${ms} ms` +
    (dev ? " (dev)" : ""),
);
