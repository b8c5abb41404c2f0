/**
 * The reading plan without an engine: a fake RecognizeTsv counts what the engine is asked. A band
 * of one flat level costs no recognition, whatever its level; a band with ink is read as before.
 * The real engine's readings are unchanged by the skip: CaptionReader's own tests
 * (recognizer_test.ts) and the caption quality bar (tests/caption_quality_test.ts).
 */
import assert from "node:assert/strict";
import { type Band, blank, type Picture } from "./preprocess.ts";
import { readBands } from "./read_bands.ts";

const WIDTH = 120, HEIGHT = 40;

/** A band of `level` everywhere, with `ink` pixels (index → level) set over it. */
function band(level: number, ink: [number, number][] = []): Band {
  const pixels = new Uint8Array(WIDTH * HEIGHT).fill(level);
  for (const [i, v] of ink) pixels[i] = v;
  return { name: "top", width: WIDTH, height: HEIGHT, pixels };
}

/** A black box of `w` x `h` pixels at (x, y) in a band: something a threshold keeps. */
function box(x: number, y: number, w: number, h: number, v = 0): [number, number][] {
  const out: [number, number][] = [];
  for (let r = y; r < y + h; r++) for (let c = x; c < x + w; c++) out.push([r * WIDTH + c, v]);
  return out;
}

/** A recogniser that answers no words and counts the pictures it was given. */
function counting() {
  const seen: Picture[] = [];
  const recognize = (picture: Picture) => {
    seen.push(picture);
    return Promise.resolve("");
  };
  return { seen, recognize };
}

/** A PGM of `pixels` (WIDTH x HEIGHT), as variantImage() makes them. */
function pgm(pixels: Uint8Array): Uint8Array {
  const header = new TextEncoder().encode(`P5\n${WIDTH} ${HEIGHT}\n255\n`);
  const out = new Uint8Array(header.length + pixels.length);
  out.set(header);
  out.set(pixels, header.length);
  return out;
}

Deno.test("readBands() asks the engine nothing for bands of one flat level, dark to white", async () => {
  for (const level of [0, 30, 127, 128, 199, 200, 239, 240, 255]) {
    const { seen, recognize } = counting();
    const words = await readBands([band(level), { ...band(level), name: "bottom" }], recognize, 60);
    assert.deepEqual(words, [], `level ${level}`);
    assert.equal(seen.length, 0, `level ${level}: ${seen.length} recognitions`);
  }
});

Deno.test("readBands() still reads every variant of a band with ink, and of a flat band with one mark", async () => {
  // White letters on grey: every round runs (no sure word comes back), the dark one excepted on a
  // band that is not bright.
  const letters = counting();
  await readBands([band(90, box(20, 10, 30, 15, 255))], letters.recognize, 60);
  assert.equal(letters.seen.length, 3, "white240, enclosed240, enclosed200");
  // A white bar with one dark mark near its end: the dark variant too.
  const mark = counting();
  await readBands([band(255, box(100, 30, 8, 8, 0))], mark.recognize, 60);
  assert.equal(mark.seen.length, 4, "white240, enclosed240, enclosed200, dark");
});

Deno.test("blank() looks at every pixel, the last included, and at the enclosed threshold's side", () => {
  const flat = new Uint8Array(WIDTH * HEIGHT).fill(255);
  assert.equal(blank({ pgm: pgm(flat) }), true);
  const lastDiffers = flat.slice();
  lastDiffers[lastDiffers.length - 1] = 0;
  assert.equal(blank({ pgm: pgm(lastDiffers) }), false, "the last pixel differs");
  const firstDiffers = flat.slice();
  firstDiffers[0] = 0;
  assert.equal(blank({ pgm: pgm(firstDiffers) }), false, "the first pixel differs");
  // Greyscale for the enclosed-region filter: only the side of its threshold counts.
  const grey = new Uint8Array(WIDTH * HEIGHT).fill(150);
  grey[77] = 199;
  assert.equal(blank({ pgm: pgm(grey), enclosed: 200 }), true, "all below 200");
  grey[77] = 200;
  assert.equal(blank({ pgm: pgm(grey), enclosed: 200 }), false, "one pixel at 200");
  assert.equal(blank({ pgm: pgm(grey.fill(230)), enclosed: 200 }), true, "all at or above 200");
  assert.equal(blank({ pgm: pgm(grey.fill(230)), enclosed: 240 }), true, "all below 240");
  // Not a PGM this module made: never taken for blank.
  assert.equal(blank({ pgm: new TextEncoder().encode("P6\n1 1\n255\nabc") }), false);
});
