/**
 * The near-duplicate corpus (issue 22), generated with sharp from a seed: distinct sources
 * (smooth "photos", flat drawings, captioned memes on shared templates), and for each the
 * variants a repost makes of it. The CI test takes a few sources; bench/b11_similar.ts all 300.
 */
import { Buffer } from "node:buffer";
import sharp, { type SharpOptions } from "sharp";

/** A seeded PRNG (mulberry32), so that a corpus is the same on every run. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One distinct source image. `template` is shared by captioned sources on the same picture. */
export interface Source {
  id: number;
  kind: "photo" | "drawing" | "captioned";
  template: number | null;
  caption: string | null;
  bytes: Uint8Array;
}

/** A repost of a source. */
export interface Variant {
  source: number;
  name: string;
  bytes: Uint8Array;
}

const WORDS = (
  "when the code works first try me explaining my bug to the duck nobody that one coworker " +
  "monday morning friday deploy cat dog surprised confused happy angry tired hungry boss meeting " +
  "again really why not this is fine everything burns coffee please no yes maybe later sure"
).split(" ");

const colour = (r: () => number) =>
  `rgb(${Math.floor(r() * 256)},${Math.floor(r() * 256)},${Math.floor(r() * 256)})`;

function size(r: () => number): { width: number; height: number } {
  const long = 300 + Math.floor(r() * 1700);
  const aspect = 0.6 + r() * 0.8;
  return aspect >= 1
    ? { width: long, height: Math.max(200, Math.round(long / aspect)) }
    : { width: Math.max(200, Math.round(long * aspect)), height: long };
}

/** A smooth random field with blurred blobs and grain: a stand-in for a photograph. */
async function photoPixels(r: () => number, width: number, height: number): Promise<Uint8Array> {
  const gw = 3 + Math.floor(r() * 5), gh = 3 + Math.floor(r() * 5);
  const grid = new Uint8Array(gw * gh * 3).map(() => Math.floor(r() * 256));
  const blobs = Array.from(
    { length: 3 + Math.floor(r() * 6) },
    () =>
      `<ellipse cx="${r() * width}" cy="${r() * height}" rx="${20 + r() * width / 3}" ry="${
        20 + r() * height / 3
      }" fill="${colour(r)}" opacity="${0.4 + r() * 0.5}"/>`,
  ).join("");
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">` +
    `<filter id="b"><feGaussianBlur stdDeviation="${4 + r() * 12}"/></filter>` +
    `<g filter="url(#b)">${blobs}</g></svg>`;
  const base = await sharp(grid, { raw: { width: gw, height: gh, channels: 3 } })
    .resize(width, height, { kernel: "cubic", fit: "fill" }).png().toBuffer();
  const out = await sharp(base)
    .composite([{ input: Buffer.from(svg) }])
    .raw().toBuffer();
  // Grain, so that the picture has fine detail like a photo.
  for (let i = 0; i < out.length; i++) {
    out[i] = Math.max(0, Math.min(255, out[i] + (r() - 0.5) * 24));
  }
  return new Uint8Array(out);
}

/** Flat shapes with outlines on a plain background: a stand-in for a drawing. */
function drawingSvg(r: () => number, width: number, height: number): string {
  const shapes = Array.from({ length: 4 + Math.floor(r() * 10) }, () => {
    const stroke = `stroke="${colour(r)}" stroke-width="${2 + r() * 10}" fill="${colour(r)}"`;
    const x = r() * width, y = r() * height, s = 20 + r() * Math.min(width, height) / 2;
    switch (Math.floor(r() * 3)) {
      case 0:
        return `<circle cx="${x}" cy="${y}" r="${s / 2}" ${stroke}/>`;
      case 1:
        return `<rect x="${x - s / 2}" y="${y - s / 2}" width="${s}" height="${
          s * (0.5 + r())
        }" ${stroke}/>`;
      default:
        return `<polygon points="${x},${y} ${x + s},${y + s * r()} ${x - s * r()},${
          y + s
        }" ${stroke}/>`;
    }
  }).join("");
  return `<rect width="100%" height="100%" fill="${colour(r)}"/>${shapes}`;
}

function escapeXml(text: string): string {
  return text.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
}

/** Meme captions: white bold capitals with a black outline, at the top and the bottom. */
function captionSvg(width: number, height: number, top: string, bottom: string): string {
  const size = Math.round(Math.min(width / 12, height / 7));
  const text = (t: string, y: number) =>
    `<text x="50%" y="${y}" text-anchor="middle" font-family="DejaVu Sans" font-weight="bold" ` +
    `font-size="${size}" fill="white" stroke="black" stroke-width="${Math.max(1, size / 15)}">` +
    `${escapeXml(t.toUpperCase())}</text>`;
  return text(top, size * 1.2) + text(bottom, height - size * 0.4);
}

function caption(r: () => number): string {
  return Array.from(
    { length: 2 + Math.floor(r() * 4) },
    () => WORDS[Math.floor(r() * WORDS.length)],
  )
    .join(" ");
}

const svgDoc = (width: number, height: number, body: string) =>
  Buffer.from(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}">${body}</svg>`,
  );

/**
 * `count` sources from `seed`, in turn a photo, a drawing and a captioned meme; the captioned
 * ones in pairs sharing a template (a photo or a drawing) with different captions.
 */
export async function makeSources(count: number, seed = 22): Promise<Source[]> {
  const r = rng(seed);
  const sources: Source[] = [];
  for (let id = 0; id < count; id++) {
    const kind = (["photo", "drawing", "captioned"] as const)[id % 3];
    if (kind === "captioned") {
      const template = Math.floor(id / 6);
      const tr = rng(seed * 7919 + template);
      const { width, height } = size(tr);
      const photo = tr() < 0.5;
      const base = photo
        ? sharp(await photoPixels(tr, width, height), { raw: { width, height, channels: 3 } })
        : sharp(svgDoc(width, height, drawingSvg(tr, width, height)));
      const text = `${caption(r)}|${caption(r)}`;
      const [top, bottom] = text.split("|");
      const bytes = await sharp(await base.png().toBuffer())
        .composite([{ input: svgDoc(width, height, captionSvg(width, height, top, bottom)) }])
        .jpeg({ quality: 90 }).toBuffer();
      sources.push({ id, kind, template, caption: text, bytes: new Uint8Array(bytes) });
      continue;
    }
    const { width, height } = size(r);
    const bytes = kind === "photo"
      ? await sharp(await photoPixels(r, width, height), { raw: { width, height, channels: 3 } })
        .jpeg({ quality: 90 }).toBuffer()
      : await sharp(svgDoc(width, height, drawingSvg(r, width, height))).png().toBuffer();
    sources.push({ id, kind, template: null, caption: null, bytes: new Uint8Array(bytes) });
  }
  return sources;
}

/**
 * The reposts of one source: recompressed, resized, re-encoded, cropped, brightened, marked,
 * animated. `wanted` (name prefixes, e.g. `["jpeg q30", "webp"]`) encodes only those, in the same
 * order and with the same bytes as in the full set (every random draw is made either way): a
 * test that uploads one repost does not pay for the twelve (2.2 s of CPU a set, the AVIF and the
 * 3,000-pixel upscale the most).
 */
export async function makeVariants(
  source: Source,
  seed = 22,
  wanted?: readonly string[],
): Promise<Variant[]> {
  const r = rng(seed * 104729 + source.id);
  const img = () => sharp(source.bytes);
  const { width = 0, height = 0 } = await img().metadata();
  const out: [string, () => Promise<Buffer>][] = [];
  const q = 30 + Math.floor(r() * 66);
  out.push(["jpeg q30", () => img().jpeg({ quality: 30 }).toBuffer()]);
  out.push([`jpeg q${q}`, () => img().jpeg({ quality: q }).toBuffer()]);
  const down = 0.5 + r() * 0.4;
  out.push([
    `resize ${Math.round(down * 100)}%`,
    () => img().resize(Math.round(width * down)).jpeg({ quality: 85 }).toBuffer(),
  ]);
  const up = Math.min(2, 3000 / Math.max(width, height));
  out.push([
    `resize ${Math.round(up * 100)}%`,
    () => img().resize(Math.round(width * up)).jpeg({ quality: 85 }).toBuffer(),
  ]);
  out.push(["png", () => img().png().toBuffer()]);
  out.push(["webp", () => img().webp({ quality: 70 }).toBuffer()]);
  out.push(["avif", () => img().avif({ quality: 50, effort: 0 }).toBuffer()]);
  const cut = 0.02 + r() * 0.03;
  const edge = Math.floor(r() * 4);
  const cw = edge < 2 ? Math.round(width * (1 - cut)) : width;
  const ch = edge >= 2 ? Math.round(height * (1 - cut)) : height;
  out.push([
    `crop ${(cut * 100).toFixed(1)}% ${["right", "left", "bottom", "top"][edge]}`,
    () =>
      img().extract({
        left: edge === 1 ? width - cw : 0,
        top: edge === 3 ? height - ch : 0,
        width: cw,
        height: ch,
      }).jpeg({ quality: 90 }).toBuffer(),
  ]);
  out.push([
    "brightness -10%",
    () => img().modulate({ brightness: 0.9 }).jpeg({ quality: 90 }).toBuffer(),
  ]);
  out.push([
    "brightness +10%",
    () => img().modulate({ brightness: 1.1 }).jpeg({ quality: 90 }).toBuffer(),
  ]);
  const mark = Math.round(Math.min(width, height) / 20);
  out.push([
    "watermark",
    () =>
      img().composite([{
        input: svgDoc(
          width,
          height,
          `<text x="${width - mark / 2}" y="${height - mark / 2}" text-anchor="end" ` +
            `font-family="DejaVu Sans" font-size="${mark}" fill="white" opacity="0.8">` +
            `memes.example</text>`,
        ),
      }]).jpeg({ quality: 90 }).toBuffer(),
  ]);
  out.push(["gif frame 0", () => animatedGif(source.bytes, width, height)]);
  const chosen = wanted ? out.filter(([name]) => wanted.some((w) => name.startsWith(w))) : out;
  if (wanted) {
    const missing = wanted.filter((w) => !chosen.some(([name]) => name.startsWith(w)));
    if (missing.length) throw new Error(`no variant named ${missing.join(", ")}`);
  }
  const done = await Promise.all(chosen.map(([, make]) => make()));
  return chosen.map(([name], i) => ({ source: source.id, name, bytes: new Uint8Array(done[i]) }));
}

/** An animated GIF (at most 500 px) whose first frame is the source and second something else. */
async function animatedGif(bytes: Uint8Array, width: number, height: number): Promise<Buffer> {
  const scale = Math.min(1, 500 / Math.max(width, height));
  const w = Math.round(width * scale), h = Math.round(height * scale);
  const first = await sharp(bytes).resize(w, h).removeAlpha().raw().toBuffer();
  const second = await sharp(bytes).resize(w, h).removeAlpha().negate().raw().toBuffer();
  return await sharp(Buffer.concat([first, second]), {
    raw: { width: w, height: h * 2, channels: 3, pageHeight: h },
  } as SharpOptions).gif({ delay: [200, 200] }).toBuffer();
}

/** Both hashes of one image, from the pixels the thumbnail worker decodes. */
export interface Hashes {
  dct: bigint;
  gradient: bigint;
}

/** Recall, false matches and the caption case of one hash at one distance. */
export interface Quality {
  distance: number;
  /** Variants within `distance` of their source, and how many variants there were. */
  recall: { found: number; of: number };
  /** Pairs of distinct sources (not sharing a template) within `distance`. */
  falseMatches: { found: number; of: number };
  /** Pairs of the same template with different captions within `distance`. */
  captionMatches: { found: number; of: number };
  /** Variant kinds that missed, with counts. */
  misses: Record<string, number>;
}

/** Measures one hash (picked by `pick`) at `distance` over hashed sources and variants. */
export function measureQuality(
  sources: { source: Source; hash: Hashes }[],
  variants: { variant: Variant; hash: Hashes }[],
  pick: (h: Hashes) => bigint,
  distance: number,
  hamming: (a: bigint, b: bigint) => number,
): Quality {
  const byId = new Map(sources.map((s) => [s.source.id, s]));
  const q: Quality = {
    distance,
    recall: { found: 0, of: 0 },
    falseMatches: { found: 0, of: 0 },
    captionMatches: { found: 0, of: 0 },
    misses: {},
  };
  for (const { variant, hash } of variants) {
    q.recall.of++;
    if (hamming(pick(hash), pick(byId.get(variant.source)!.hash)) <= distance) q.recall.found++;
    else {
      const kind = variant.name.split(" ")[0];
      q.misses[kind] = (q.misses[kind] ?? 0) + 1;
    }
  }
  for (let i = 0; i < sources.length; i++) {
    for (let j = i + 1; j < sources.length; j++) {
      const a = sources[i], b = sources[j];
      const same = a.source.template !== null && a.source.template === b.source.template;
      const bucket = same ? q.captionMatches : q.falseMatches;
      bucket.of++;
      if (hamming(pick(a.hash), pick(b.hash)) <= distance) bucket.found++;
    }
  }
  return q;
}
