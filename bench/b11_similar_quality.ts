/**
 * B11 (quality): the near-duplicate corpus of issue 22 in full (300 sources, 12 variants each;
 * tests/_harness/similar_corpus.ts), hashed the way the thumbnail worker hashes, and for both
 * candidate hashes (DCT pHash, gradient dHash) at distances 4-16: recall (a variant finds its
 * source), false matches (distinct sources), and captions (one template, different captions).
 * `deno run -A bench/b11_similar_quality.ts [sources]`; prints a Markdown table.
 */
import sharp from "sharp";
import { decodeThumbnailPixels } from "../adapters/thumbnails/make_thumbnail.ts";
import { dctHashOf, gradientHashOf } from "../adapters/thumbnails/pixels.ts";
import { hammingDistance } from "../domain/phash.ts";
import {
  type Hashes,
  makeSources,
  makeVariants,
  measureQuality,
  type Source,
  type Variant,
} from "../tests/_harness/similar_corpus.ts";

sharp.concurrency(1);
const count = Number(Deno.args[0] ?? 300);

async function hashes(bytes: Uint8Array): Promise<Hashes> {
  const pixels = await decodeThumbnailPixels(bytes, 400, 50_000_000);
  return { dct: await dctHashOf(pixels), gradient: await gradientHashOf(pixels) };
}

const started = performance.now();
const sources = await makeSources(count);
const hashedSources: { source: Source; hash: Hashes }[] = [];
const hashedVariants: { variant: Variant; hash: Hashes }[] = [];
const pct = (p: { found: number; of: number }) =>
  `${(100 * p.found / p.of).toFixed(2)}% (${p.found}/${p.of})`;

/** Prints the table so far: a long run shows its figures every 50 sources. */
function table() {
  console.log(
    `\n${hashedSources.length} sources, ${hashedVariants.length} variants, ` +
      `${((performance.now() - started) / 1000).toFixed(0)} s\n`,
  );
  console.log(
    "| hash | distance | recall | false matches | same template, other caption | misses |",
  );
  console.log("|---|---|---|---|---|---|");
  for (const name of ["dct", "gradient"] as const) {
    for (const distance of [4, 6, 8, 10, 12, 14, 16]) {
      const q = measureQuality(
        hashedSources,
        hashedVariants,
        (h) => h[name],
        distance,
        hammingDistance,
      );
      console.log(
        `| ${name === "dct" ? "DCT pHash" : "gradient dHash"} | ${distance} | ${pct(q.recall)} | ` +
          `${pct(q.falseMatches)} | ${pct(q.captionMatches)} | ${JSON.stringify(q.misses)} |`,
      );
    }
  }
}

for (const source of sources) {
  hashedSources.push({ source, hash: await hashes(source.bytes) });
  for (const variant of await makeVariants(source)) {
    hashedVariants.push({ variant, hash: await hashes(variant.bytes) });
  }
  if (hashedSources.length % 50 === 0 && hashedSources.length < count) table();
}
table();
