/**
 * The caption corpus (recognition engine, adapters/ocr/): reaction images with printed captions,
 * generated with sharp (SVG text through librsvg and fontconfig) from a seed, so that a CI run
 * and a bench run of the same size see the same images. Styles: white capitals with a black
 * outline over a photo-like background (top, bottom, or both), and black text on a white bar.
 */
import { Buffer } from "node:buffer";
import { searchImagesByCaption } from "../../db/caption_search.ts";
import { setImageCaption } from "../../db/captions.ts";
import type { Sql } from "../../db/client.ts";
import { normalizeCaption, queryWords } from "../../domain/caption_text.ts";
import sharp, { type Sharp } from "sharp";
import { rng } from "./similar_corpus.ts";

/** One generated image; `caption` in reading order, `distinctive` one of its words to search. */
export interface CaptionImage {
  name: string;
  bytes: Uint8Array;
  caption: string;
  distinctive: string;
}

const STOP = new Set(
  ("a an the is are was be to of in on at for and or but not no so if it its i me my you your we " +
    "our they he she his her this that what when why how who just all do can get got like with " +
    "from up out about too very one now then here there").split(" "),
);

/** Common caption words; those of 4+ letters that are not stop words can be searched for. */
export const CAPTION_WORDS: readonly string[] = [
  ...STOP,
  ...(
    "monday friday weekend morning tonight coffee pizza tacos burger donut cookie cake bacon " +
    "cheese snack lunch dinner breakfast cat dog doggo kitty puppy hamster parrot duck goose frog " +
    "llama panda penguin dragon unicorn boss coworker teacher student mom dad grandma baby toddler " +
    "intern manager client customer neighbor happy sad angry tired hungry sleepy confused " +
    "surprised excited nervous proud bored lonely grumpy salty awkward fine great nope yes maybe " +
    "sure never always again really literally totally basically seriously honestly code deploy " +
    "bug server database laptop keyboard printer wifi internet password update error meeting email " +
    "deadline project report budget salary payday vacation holiday office work school homework " +
    "exam grades lecture run walk dance sing scream cry laugh smile sleep eat drink thumbs facepalm " +
    "shrug wink everything nothing something fire burns chaos panic drama winning losing success " +
    "failure victory game level quest loot respawn ninja pirate wizard robot alien zombie ghost " +
    "vampire banana potato noodles sushi soup salad pancakes waffles cereal milk juice soda " +
    "tuesday wednesday thursday saturday sunday summer winter spring autumn rain snow sunshine " +
    "beach mountain forest city party concert movie music song guitar drums phone charger battery " +
    "selfie camera photo video stream meme joke prank plot twist spoiler ending sequel trailer " +
    "hero villain sidekick friend enemy family brother sister cousin uncle auntie stranger crowd " +
    "gym workout cardio diet calories sweat nap bedtime alarm snooze late early today tomorrow " +
    "yesterday forever minute hour week month year birthday wedding gift surprise secret truth " +
    "lies drama mistake oops whoops yikes wow omg lol bruh dude bro sis chill vibes mood energy " +
    "brain memory focus genius idiot legend champion rookie expert noob hacker admin user robot " +
    "cloud backup crash reboot loading waiting patience stress relax calm peace chaos trust " +
    "dream plan goal hope luck karma money rich broke shopping cart sale price refund receipt " +
    "traffic train plane airport ticket hotel taxi bike scooter rocket space moon stars planet " +
    "ocean river island desert jungle garden flower tree grass leaf shark whale dolphin octopus " +
    "spider snake lizard turtle rabbit horse chicken cow pig sheep goat mouse owl eagle bee"
  ).split(" "),
].filter((w, i, all) => all.indexOf(w) === i);

/**
 * Words printed on no image of the corpus, for the false-match rate of search: none is a caption
 * word, and none has a pg_trgm word_similarity of 0.5 or more to one ("fountain" would match
 * "mountain", which is right for search but not a false match).
 */
export const ABSENT_WORDS: readonly string[] = (
  "volcano saxophone glacier asteroid cathedral telescope harmonica porcupine archipelago " +
  "blacksmith carburetor dandelion eucalyptus flamingo gondola hydrant iceberg jellyfish " +
  "kaleidoscope lighthouse marmalade nebula orchestra parachute quartz raccoon satellite " +
  "tambourine umbrella vineyard walrus xylophone yodel zeppelin abacus badminton cactus " +
  "dungeon elephant fjord gazebo hedgehog igloo javelin kangaroo mosaic nutmeg oyster " +
  "pelican quiver reindeer saffron tornado ukulele velvet wombat yogurt zucchini accordion " +
  "bagpipe compass dinosaur emerald falcon giraffe harpoon insignia jasmine kiwifruit lagoon " +
  "mackerel narwhal obelisk pagoda quill rhubarb sapphire tulip utensil vortex windmill yacht " +
  "zodiac anchor blizzard canyon daffodil eclipse fossil geyser hammock ivory jaguar kayak " +
  "labyrinth meteor nomad orbit pumpkin quarry riddle scarecrow thimble unicycle vulture " +
  "wardrobe anvil biscuit chimney domino easel ferret gorilla hatchet inkwell juggler kettle " +
  "locomotive magnet nectar olive paprika quokka ravioli sandal trombone urchin violin " +
  "antelope buffalo cobblestone dolmen escalator fiddle gargoyle hurricane icicle jukebox " +
  "knapsack lobster mitten napkin ostrich pretzel quicksand rooster seashell trumpet upholstery " +
  "vanilla wheelbarrow almond bonsai caramel dagger evergreen harvest incense " +
  "jigsaw keystone lemonade mandolin nostril oatmeal pinecone quartet rosemary scaffold " +
  "tapestry velcro wrench alpaca bamboo cello dumpling elbow feather ginger hazelnut infantry " +
  "juniper kimono ladle meadow nugget oregano plywood radish slipper tractor vinegar walnut " +
  "avalanche coconut dormouse espresso flannel gravel hologram inlet jester kernel " +
  "lemur mustard notebook"
).split(" ").filter((w, i, all) => all.indexOf(w) === i && !CAPTION_WORDS.includes(w));

const CONTENT = CAPTION_WORDS.filter((w) => !STOP.has(w));
const searchable = (w: string) => w.length >= 4 && !STOP.has(w);

/** Fonts with the width of an average character in em; Bebas Neue only when installed. */
const FONTS = [
  { name: "dejavu", family: "DejaVu Sans", weight: "bold", em: 0.72 },
  { name: "dejavu-condensed", family: "DejaVu Sans Condensed", weight: "bold", em: 0.65 },
  { name: "liberation-narrow", family: "Liberation Sans Narrow", weight: "bold", em: 0.56 },
  { name: "liberation-serif", family: "Liberation Serif", weight: "bold", em: 0.68 },
  { name: "bebas", family: "Bebas Neue", weight: "normal", em: 0.42 },
];

let bebas: Promise<boolean> | undefined;
/** Whether fontconfig knows Bebas Neue; without it, its images use DejaVu Sans Condensed. */
function hasBebas(): Promise<boolean> {
  bebas ??= new Deno.Command("fc-list", { args: [":", "family"], stdout: "piped" }).output()
    .then((o) => new TextDecoder().decode(o.stdout).includes("Bebas Neue"), () => false);
  return bebas;
}

const colour = (r: () => number, lo = 0, hi = 256) =>
  `rgb(${[0, 0, 0].map(() => Math.floor(lo + r() * (hi - lo))).join(",")})`;
const escapeXml = (t: string) =>
  t.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;");
const svg = (w: number, h: number, body: string) =>
  Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">${body}</svg>`);

/**
 * A photo-like background: a colour field with blobs and shapes drawn at a quarter of the size
 * and scaled up (cheap smoothness), then grain from a seeded noise tile.
 */
async function background(r: () => number, width: number, height: number): Promise<Buffer> {
  const w = Math.max(8, Math.round(width / 4)), h = Math.max(8, Math.round(height / 4));
  // A third are bright (sky, a white wall, an overexposed shot): the hard case for white text.
  const lo = r() < 0.33 ? 170 : 0;
  const shapes = Array.from({ length: 4 + Math.floor(r() * 8) }, () => {
    const [x, y, rx, ry] = [r() * w, r() * h, 4 + r() * w / 3, 4 + r() * h / 3];
    const fill = `fill="${colour(r, lo)}" opacity="${(0.4 + r() * 0.6).toFixed(2)}"`;
    return r() < 0.7
      ? `<ellipse cx="${x}" cy="${y}" rx="${rx}" ry="${ry}" ${fill}/>`
      : `<rect x="${x}" y="${y}" width="${rx}" height="${ry}" ${fill}/>`;
  }).join("");
  const grad = `<linearGradient id="g" x1="0" y1="0" x2="${r().toFixed(2)}" y2="1">` +
    `<stop offset="0" stop-color="${colour(r, lo)}"/><stop offset="1" stop-color="${
      colour(r, lo)
    }"/>` +
    `</linearGradient>`;
  const small = await sharp(svg(
    w,
    h,
    `<defs>${grad}</defs><rect width="100%" height="100%" ` +
      `fill="url(#g)"/><g filter="url(#b)">${shapes}</g><filter id="b"><feGaussianBlur ` +
      `stdDeviation="${(r() * 3).toFixed(1)}"/></filter>`,
  )).png().toBuffer();
  const tile = new Uint8Array(96 * 96).map(() => 128 + (r() + r() - 1) * 64);
  const noise = await sharp(tile, { raw: { width: 96, height: 96, channels: 1 } }).png().toBuffer();
  return sharp(small).resize(width, height, { fit: "fill", kernel: "cubic" })
    .composite([{ input: noise, tile: true, blend: "overlay" }]).removeAlpha()
    // Lossless, and read back at once by the next step: at zlib's default level, compressing it
    // was a third of the corpus's CPU, for the same pixels.
    .png({ compressionLevel: 0 }).toBuffer();
}

/** A photo-like picture without text (PNG), for tests that need a background or a non-caption. */
export function photoBackground(width: number, height: number, seed = 1): Promise<Buffer> {
  return background(rng(seed), width, height);
}

/** `n` photo-like JPEGs without text (300-2000 px, quality 60-95): recognition should find nothing. */
export async function* textFreePhotos(
  n: number,
  seed = 1,
): AsyncGenerator<{ name: string; bytes: Uint8Array }> {
  const r = rng(seed * 7919 + 17);
  for (let i = 0; i < n; i++) {
    const width = 300 + Math.floor(r() * 1701), height = 300 + Math.floor(r() * 1701);
    const quality = 60 + Math.floor(r() * 36);
    const bytes = await sharp(await background(r, width, height)).jpeg({ quality }).toBuffer();
    yield {
      name: `p${String(i).padStart(4, "0")}-${width}w-q${quality}.jpg`,
      bytes: new Uint8Array(bytes),
    };
  }
}

/** Splits words into one line, or two balanced lines when one would be too wide. */
function lines(words: string[], maxChars: number): string[] {
  const text = words.join(" ");
  if (text.length <= maxChars || words.length < 2) return [text];
  let best = 1;
  for (let i = 1; i < words.length; i++) {
    const d = (k: number) =>
      Math.abs(words.slice(0, k).join(" ").length - words.slice(k).join(" ").length);
    if (d(i) < d(best)) best = i;
  }
  return [words.slice(0, best).join(" "), words.slice(best).join(" ")];
}

interface Block {
  lines: string[];
  size: number;
}

/** Lays words out at a font size that fits `width` and at most `maxHeight`. */
function block(words: string[], width: number, size: number, em: number, maxH: number): Block {
  const ls = lines(words, Math.floor(0.92 * width / (size * em)));
  const longest = Math.max(...ls.map((l) => l.length));
  const fit = Math.min(size, 0.92 * width / (longest * em), maxH / (ls.length * 1.15));
  return { lines: ls, size: Math.max(10, Math.floor(fit)) };
}

function textSvg(b: Block, x: number, y0: number, font: typeof FONTS[0], style: string): string {
  return b.lines.map((l, i) =>
    `<text x="${x}" y="${Math.round(y0 + i * b.size * 1.12)}" font-family="${font.family}" ` +
    `font-weight="${font.weight}" font-size="${b.size}" ${style}>${escapeXml(l)}</text>`
  ).join("");
}

/** Draws a caption of 1-6 words; searchable words are used by at most `cap` images if possible. */
function drawCaption(r: () => number, uses: Map<string, number>, cap: number): string[] {
  const length = [1, 2, 2, 3, 3, 3, 4, 4, 5, 6][Math.floor(r() * 10)];
  const words: string[] = [];
  for (let tries = 0; words.length < length && tries < 100; tries++) {
    const pool = r() < 0.3 && length > 1 ? [...STOP] : CONTENT;
    const w = pool[Math.floor(r() * pool.length)];
    if (words.includes(w) || (searchable(w) && (uses.get(w) ?? 0) >= cap && tries < 90)) continue;
    words.push(w);
  }
  if (!words.some(searchable)) {
    const fresh = CONTENT.filter((w) => searchable(w) && !words.includes(w))
      .sort((a, b) => (uses.get(a) ?? 0) - (uses.get(b) ?? 0));
    words[Math.floor(r() * words.length)] = fresh[Math.floor(r() * Math.min(20, fresh.length))];
  }
  return words;
}

/** `n` distinct captioned JPEGs from `seed`; the same arguments give the same images. */
export async function* captionCorpus(n: number, seed = 1): AsyncGenerator<CaptionImage> {
  const r = rng(seed);
  const uses = new Map<string, number>();
  const withBebas = await hasBebas();
  for (let i = 0; i < n; i++) {
    const words = drawCaption(r, uses, 4);
    for (const w of words.filter(searchable)) uses.set(w, (uses.get(w) ?? 0) + 1);
    const distinctive = words.filter(searchable)
      .sort((a, b) => (uses.get(a) ?? 0) - (uses.get(b) ?? 0))[0];
    let font = FONTS[Math.floor(r() * FONTS.length)];
    if (font.name === "bebas" && !withBebas) font = FONTS[1];
    const long = 300 + Math.floor(r() * 1701);
    const aspect = 0.6 + r() * 0.9;
    const width = aspect >= 1 ? long : Math.max(240, Math.round(long * aspect));
    const height = aspect >= 1 ? Math.max(200, Math.round(long / aspect)) : long;
    const styles = ["top", "bottom", "both", "bar"] as const;
    const drawn = styles[Math.floor(r() * 4)];
    const style = drawn === "both" && words.length < 2 ? "top" : drawn;
    const angle = ((r() * 2 - 1) * 3).toFixed(2);
    const quality = 60 + Math.floor(r() * 36);
    const size = width * (0.07 + r() * 0.05);
    let image: Sharp;
    let text = words.join(" ");
    if (style === "bar") {
      const lower = r() < 0.5;
      text = lower ? text[0].toUpperCase() + text.slice(1) : text.toUpperCase();
      const b = block(text.split(" "), width, size * 0.8, font.em * (lower ? 0.9 : 1), height);
      const tilt = width * Math.abs(Math.sin(Number(angle) * Math.PI / 180));
      const barH = Math.round(b.lines.length * b.size * 1.15 + b.size * 0.8 + tilt);
      const photoH = Math.max(100, height - barH);
      const left = r() < 0.5, under = r() < 0.25;
      const body = `<rect width="100%" height="100%" fill="white"/><g transform="rotate(${angle} ` +
        `${width / 2} ${barH / 2})">` + textSvg(
          b,
          left ? Math.round(width * 0.04) : width / 2,
          b.size * 1.05 + tilt / 2,
          font,
          `fill="${colour(r, 0, 60)}"${left ? "" : ' text-anchor="middle"'}`,
        ) + "</g>";
      image = sharp(await background(r, width, photoH))
        .extend({ [under ? "bottom" : "top"]: barH, background: "#ffffff" })
        .composite([{ input: svg(width, barH, body), top: under ? photoH : 0, left: 0 }]);
    } else {
      text = text.toUpperCase();
      const all = text.split(" ");
      const split = style === "both" ? 1 + Math.floor(r() * (all.length - 1)) : all.length;
      const parts = style === "both"
        ? [all.slice(0, split), all.slice(split)]
        : style === "top"
        ? [all, []]
        : [[], all];
      const stroke = `fill="white" stroke="black" stroke-width="${
        (size * (0.05 + r() * 0.04))
          .toFixed(1)
      }" paint-order="stroke" stroke-linejoin="round" text-anchor="middle"`;
      const body = parts.map((p, k) => {
        if (p.length === 0) return "";
        const b = block(p, width, size, font.em, height * 0.26);
        const h = b.lines.length * b.size * 1.12;
        const y0 = k === 0 ? height * 0.03 + b.size : height * 0.97 - h + b.size * 0.8;
        return `<g transform="rotate(${angle} ${width / 2} ${y0})">` +
          textSvg(b, width / 2, y0, font, stroke) + "</g>";
      }).join("");
      image = sharp(await background(r, width, height))
        .composite([{ input: svg(width, height, body) }]);
    }
    const bytes = await image.jpeg({ quality }).toBuffer();
    const name = `c${String(i).padStart(4, "0")}-${style}-${font.name}-${width}w-q${quality}.jpg`;
    yield { name, bytes: new Uint8Array(bytes), caption: text, distinctive };
  }
}

/** How search by a caption word does: the image found in the top 5, and absent words matching. */
export interface SearchQuality {
  found: number;
  of: number;
  falseMatches: number;
  absent: number;
}

/**
 * Search exactly as the service searches (db/caption_search.ts): the recognised texts are stored as
 * captions of images in `sql`'s database (migrated; its other images take part too, so give it an
 * empty one), each image is looked for by its distinctive word, top 5; and `absent` words, which
 * should find nothing. Items with no distinctive word (pictures without a caption) are searched
 * among, not for. The images are removed again at the end.
 */
export async function searchQuality(
  sql: Sql,
  items: { distinctive: string; text: string }[],
  absent: readonly string[] = ABSENT_WORDS.slice(0, 200),
): Promise<SearchQuality> {
  const run = Math.random().toString(36).slice(2, 6);
  const ids = items.map((_, n) => `q${run}${String(n).padStart(3, "0")}`);
  try {
    for (const [n, item] of items.entries()) {
      await sql`insert into images (short_id, hash, content_type, size_bytes, width, height)
        values (${ids[n]}, ${`quality-${run}-${n}`}, 'image/jpeg', 1, 1, 1)`;
      await setImageCaption(sql, ids[n], normalizeCaption(item.text), "ocr");
    }
    const search = (word: string) =>
      searchImagesByCaption(sql, {
        words: queryWords(word),
        tags: [],
        exclude: [],
        limit: 5,
        after: null,
      });
    let found = 0, falseMatches = 0;
    for (const [n, item] of items.entries()) {
      if (!item.distinctive) continue; // a picture without a caption, there to be not found
      if ((await search(item.distinctive)).some((hit) => hit.short_id === ids[n])) found++;
    }
    for (const word of absent) if ((await search(word)).length) falseMatches++;
    const of = items.filter((i) => i.distinctive).length;
    return { found, of, falseMatches, absent: absent.length };
  } finally {
    await sql`delete from images where short_id = any(${ids})`;
  }
}
