/**
 * Renders the app icons of the web app manifest (routes/web_app.ts) from their SVG sources in
 * static/src/ into static/: `deno run --allow-read --allow-write --allow-env --allow-ffi
 * scripts/icons.ts`. The PNGs are committed (a few KB each), so a build needs no image tool;
 * rerun this after changing a source.
 */
import sharp from "sharp";

const ROOT = new URL("../static/", import.meta.url);

/** Output name, source, side in pixels. */
const ICONS: [string, string, number][] = [
  ["icon-192.png", "src/icon.svg", 192],
  ["icon-512.png", "src/icon.svg", 512],
  ["icon-maskable-512.png", "src/icon-maskable.svg", 512],
  // iOS rounds the corners itself and shows transparency as black: the full-bleed square.
  ["apple-touch-icon.png", "src/icon-maskable.svg", 180],
];

for (const [name, source, side] of ICONS) {
  const svg = await Deno.readFile(new URL(source, ROOT));
  const png = await sharp(svg, { density: 72 * (side / 512) * 4 }).resize(side, side)
    .png({ compressionLevel: 9, palette: true }).toBuffer();
  await Deno.writeFile(new URL(name, ROOT), png);
  console.log(`${name}: ${side}x${side}, ${png.length} bytes`);
}
