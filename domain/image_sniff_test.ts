import { deepEqual, equal, ok } from "node:assert/strict";
import fc from "npm:fast-check@4.10.2";
import sharp, { type Sharp } from "sharp";
import { type ImageType, SNIFF_BYTES, sniffImage, sniffVideo } from "./image_sniff.ts";

const W = 301;
const H = 173;

function canvas(channels: 3 | 4 = 3): Sharp {
  const alpha = channels === 4 ? 0.5 : 1;
  return sharp({
    create: { width: W, height: H, channels, background: { r: 40, g: 160, b: 90, alpha } },
  });
}

async function bytes(image: Sharp): Promise<Uint8Array> {
  return new Uint8Array(await image.toBuffer());
}

function ascii(text: string): Uint8Array {
  return new TextEncoder().encode(text);
}

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) out.set(p, (at += p.length) - p.length);
  return out;
}

/** A JPEG APPn segment of `size` payload bytes (at most 65533). */
function appSegment(n: number, size: number, fill = 0x41): Uint8Array {
  const seg = new Uint8Array(4 + size).fill(fill);
  seg.set([0xff, 0xe0 + n, (size + 2) >> 8, (size + 2) & 0xff]);
  return seg;
}

const real: [string, () => Sharp, ImageType][] = [
  ["JPEG", () => canvas().jpeg(), "image/jpeg"],
  ["progressive JPEG (SOF2)", () => canvas().jpeg({ progressive: true }), "image/jpeg"],
  ["PNG", () => canvas().png(), "image/png"],
  ["GIF", () => canvas().gif(), "image/gif"],
  ["lossy WebP (VP8)", () => canvas().webp(), "image/webp"],
  ["lossless WebP (VP8L)", () => canvas().webp({ lossless: true }), "image/webp"],
  ["WebP with alpha (VP8X)", () => canvas(4).webp(), "image/webp"],
  ["AVIF", () => canvas().avif(), "image/avif"],
  ["AVIF with alpha", () => canvas(4).avif(), "image/avif"],
];

for (const [name, make, type] of real) {
  Deno.test(`sniffImage() reads type and size from ${name}`, async () => {
    const image = await bytes(make());
    deepEqual(sniffImage(image), { type, width: W, height: H });
    // Every prefix either is too short to tell or tells the truth, and none throws.
    const want = { type, width: W, height: H };
    for (let n = 0; n <= Math.min(image.length, 600); n++) {
      const got = sniffImage(image.subarray(0, n));
      if (got !== null) deepEqual(got, want, `prefix of ${n} bytes`);
    }
  });
}

Deno.test("sniffImage() tells the WebP chunk kinds apart", async () => {
  const chunk = async (image: Sharp) => String.fromCharCode(...(await bytes(image)).slice(12, 16));
  deepEqual(await chunk(canvas().webp()), "VP8 ");
  deepEqual(await chunk(canvas().webp({ lossless: true })), "VP8L");
  deepEqual(await chunk(canvas(4).webp()), "VP8X");
});

Deno.test("sniffImage() finds a JPEG SOF behind large EXIF and APP segments", async () => {
  const exif = await bytes(
    canvas().jpeg().withExif({ IFD0: { ImageDescription: "x".repeat(60_000) } }),
  );
  deepEqual(sniffImage(exif), { type: "image/jpeg", width: W, height: H });

  const plain = await bytes(canvas().jpeg());
  const padding = Array.from({ length: 6 }, (_, i) => appSegment(2, 65_533, 0xc0 + i));
  const padded = concat(plain.subarray(0, 2), ...padding, plain.subarray(2));
  ok(padded.length > 390_000 && padded.length < SNIFF_BYTES);
  deepEqual(sniffImage(padded.subarray(0, SNIFF_BYTES)), {
    type: "image/jpeg",
    width: W,
    height: H,
  });
  // The same file cut before its SOF cannot be measured.
  equal(sniffImage(padded.subarray(0, 300_000)), null);
});

Deno.test("sniffImage() skips fill bytes, standalone markers and DHT/DAC segments", () => {
  const sof = [0xff, 0xc1, 0x00, 0x0b, 0x08, 0x00, 0x07, 0x00, 0x05, 0x01, 0x01, 0x11, 0x00];
  const jpeg = Uint8Array.from([
    ...[0xff, 0xd8, 0xff, 0xff, 0xff], // SOI, then fill bytes before the next marker
    ...[0xd0, 0xff, 0x01], // RST0 and TEM carry no length
    ...[0xff, 0xc4, 0x00, 0x07, 0x08, 0x01, 0x00, 0x02, 0x00], // DHT looks like a SOF but is not
    ...[0xff, 0xcc, 0x00, 0x04, 0x01, 0x02], // DAC likewise
    ...sof,
  ]);
  deepEqual(sniffImage(jpeg), { type: "image/jpeg", width: 5, height: 7 });
});

Deno.test("sniffImage() gives up on a JPEG whose scan starts before any frame header", () => {
  const jpeg = Uint8Array.from([0xff, 0xd8, 0xff, 0xda, 0x00, 0x08, 1, 2, 3, 4, 5, 6, 0xff, 0xd9]);
  equal(sniffImage(jpeg), null);
  equal(sniffImage(Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x01])), null);
});

Deno.test("sniffImage() reports the huge sizes of header-only pixel bombs", () => {
  const gif = new Uint8Array(35);
  gif.set(ascii("GIF89a"));
  gif.set([0x30, 0x75, 0x30, 0x75], 6); // 30000 x 30000
  deepEqual(sniffImage(gif), { type: "image/gif", width: 30_000, height: 30_000 });

  const png = new Uint8Array(33);
  png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
  png.set(ascii("IHDR"), 12);
  new DataView(png.buffer).setUint32(16, 100_000);
  new DataView(png.buffer).setUint32(20, 100_000);
  png.set([8, 2, 0, 0, 0], 24);
  deepEqual(sniffImage(png), { type: "image/png", width: 100_000, height: 100_000 });

  const jpeg = Uint8Array.from([
    ...[0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, ...ascii("JFIF\0"), 1, 1, 0, 0, 1, 0, 1, 0, 0],
    ...[0xff, 0xc0, 0x00, 0x11, 0x08, 0xea, 0x60, 0xea, 0x60, 0x03],
    ...[1, 0x22, 0, 2, 0x11, 1, 3, 0x11, 1],
  ]);
  deepEqual(sniffImage(jpeg), { type: "image/jpeg", width: 60_000, height: 60_000 });

  const webp = new Uint8Array(30);
  webp.set(ascii("RIFF"));
  webp.set([22, 0, 0, 0], 4);
  webp.set(ascii("WEBPVP8X"), 8);
  webp.set([10, 0, 0, 0, 0x10, 0, 0, 0, 0x7f, 0x3e, 0, 0x7f, 0x3e, 0], 16); // 16000 x 16000
  deepEqual(sniffImage(webp), { type: "image/webp", width: 16_000, height: 16_000 });
});

/** An ISO-BMFF box: 32-bit size, fourcc, payload. */
function box(type: string, ...payload: (Uint8Array | number[])[]): Uint8Array {
  const body = concat(...payload.map((p) => Uint8Array.from(p)));
  const out = concat(new Uint8Array(4), ascii(type), body);
  new DataView(out.buffer).setUint32(0, out.length);
  return out;
}

function ispe(width: number, height: number): Uint8Array {
  const payload = new Uint8Array(12);
  new DataView(payload.buffer).setUint32(4, width);
  new DataView(payload.buffer).setUint32(8, height);
  return box("ispe", payload);
}

Deno.test("sniffImage() takes the AVIF size from the primary item, not a grid tile", () => {
  const ftyp = box("ftyp", ascii("mif1"), [0, 0, 0, 0], ascii("mif1avifmiaf"));
  const pitm = box("pitm", [0, 0, 0, 0, 0, 2]); // primary item 2: the grid
  // item 1 (a tile) -> property 1, item 2 (the grid) -> property 2
  const ipma = box("ipma", [0, 0, 0, 0, 0, 0, 0, 2, 0, 1, 1, 0x81, 0, 2, 1, 0x82]);
  const iprp = box("iprp", box("ipco", ispe(512, 512), ispe(2000, 1500)), ipma);
  const meta = box("meta", [0, 0, 0, 0], box("hdlr", new Uint8Array(25)), pitm, iprp);
  const avif = concat(ftyp, meta, box("mdat", new Uint8Array(64)));
  deepEqual(sniffImage(avif), { type: "image/avif", width: 2000, height: 1500 });
  // Without associations the first ispe is the best guess.
  const bare = concat(ftyp, box("meta", [0, 0, 0, 0], box("iprp", box("ipco", ispe(9, 4)))));
  deepEqual(sniffImage(bare), { type: "image/avif", width: 9, height: 4 });
});

Deno.test("sniffImage() refuses ISO-BMFF files that are not AVIF", () => {
  const heic = concat(box("ftyp", ascii("heic"), [0, 0, 0, 0], ascii("mif1heic")));
  const meta = box("meta", [0, 0, 0, 0], box("iprp", box("ipco", ispe(9, 4))));
  equal(sniffImage(concat(heic, meta)), null);
  const mp4 = box("ftyp", ascii("isom"), [0, 0, 2, 0], ascii("isomiso2mp41"));
  equal(sniffImage(concat(mp4, meta)), null);
});

Deno.test("sniffImage() refuses text, markup, empty input and zero sizes", () => {
  const refused = [
    new Uint8Array(0),
    new Uint8Array(1024),
    ascii("hello, world\n"),
    ascii("<!doctype html><html><body><script>alert(1)</script></body></html>"),
    ascii('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect/></svg>'),
    ascii('<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg"></svg>'),
    ascii("GIF89a"), // header cut before the screen descriptor
    ascii("GIF89a\0\0\x10\0"), // zero width
    ascii("RIFF\0\0\0\0WEBPVP8 "), // no frame header
    Uint8Array.from([0xff, 0xd8, 0xff, 0xd9]), // SOI then EOI
  ];
  for (const input of refused) equal(sniffImage(input), null);
});

Deno.test("sniffImage() treats a GIF header followed by HTML as a GIF", () => {
  const polyglot = concat(ascii("GIF89a\x0a\0\x0b\0\0\0\0"), ascii("<html><script>x()</script>"));
  deepEqual(sniffImage(polyglot), { type: "image/gif", width: 10, height: 11 });
});

Deno.test("sniffImage() never throws and never reports a zero size", () => {
  const prefixes = [[0xff, 0xd8, 0xff], [0x89, ...ascii("PNG\r\n\x1a\n")], [...ascii("GIF89a")], [
    ...ascii("RIFF\0\0\0\0WEBP"),
  ], [0, 0, 0, 24, ...ascii("ftypavif")]];
  fc.assert(
    fc.property(
      fc.constantFrom(...prefixes),
      fc.uint8Array({ maxLength: 300 }),
      (prefix, rest) => {
        const got = sniffImage(concat(Uint8Array.from(prefix), rest));
        return got === null || (got.width > 0 && got.height > 0);
      },
    ),
    { numRuns: 3000 },
  );
});

Deno.test("sniffImage() measures a GIF by its frames where they reach past the logical screen", async () => {
  const gif = new Uint8Array(
    await sharp({ create: { width: 300, height: 200, channels: 3, background: "#f00" } }).gif()
      .toBuffer(),
  );
  deepEqual(sniffImage(gif), { type: "image/gif", width: 300, height: 200 });
  const small = gif.slice();
  small.set([10, 0, 5, 0], 6); // the screen claims 10 x 5; the frame is still 300 x 200
  deepEqual(sniffImage(small), { type: "image/gif", width: 300, height: 200 });
  // What libvips decodes agrees.
  const meta = await sharp(small).metadata();
  deepEqual([meta.width, meta.height], [300, 200]);
  // A 1 x 1 screen around a 30000 x 30000 frame descriptor is a 30000 x 30000 image.
  const bomb = concat(
    ascii("GIF89a\x01\0\x01\0\0\0\0"), // 1 x 1, no global colour table
    new Uint8Array([0x21, 0xf9, 0x04, 0, 0, 0, 0, 0]), // a graphic control extension
    new Uint8Array([0x2c, 5, 0, 7, 0, 0x30, 0x75, 0x30, 0x75, 0, 2, 2, 0x4c, 0x01, 0, 0x3b]),
  );
  deepEqual(sniffImage(bomb), { type: "image/gif", width: 30_005, height: 30_007 });
});

/** An ISO BMFF box. */
function sizedBox(type: string, body: Uint8Array, size = 8 + body.length): Uint8Array {
  const head = new Uint8Array(8);
  new DataView(head.buffer).setUint32(0, size);
  head.set(ascii(type), 4);
  return concat(head, body);
}

const ftyp = (major: string, ...compatible: string[]) =>
  sizedBox("ftyp", concat(ascii(major), new Uint8Array(4), ...compatible.map(ascii)));
const mp4 = (...brands: string[]) =>
  concat(
    ftyp(brands[0], ...brands.slice(1)),
    sizedBox("moov", new Uint8Array(16)),
    sizedBox("mdat", new Uint8Array(32)),
  );

/** An EBML header with `docType`, then a segment of `body` (its size `size`, or the real one). */
function ebml(docType: string, body: Uint8Array, size = body.length): Uint8Array {
  const doc = concat(new Uint8Array([0x42, 0x82, 0x80 | docType.length]), ascii(docType));
  const header = concat(new Uint8Array([0x1a, 0x45, 0xdf, 0xa3, 0x80 | doc.length]), doc);
  const segSize = new Uint8Array(8);
  segSize[0] = 0x01;
  new DataView(segSize.buffer).setUint32(4, size);
  return concat(header, new Uint8Array([0x18, 0x53, 0x80, 0x67]), segSize, body);
}

Deno.test("sniffVideo() knows MP4 brands and WebM, and names a cut or lying file", () => {
  deepEqual(sniffVideo(mp4("isom", "iso2", "avc1", "mp41")), {
    type: "video/mp4",
    demuxer: "mov",
    problem: null,
    streamable: true,
  });
  deepEqual(sniffVideo(mp4("mp42", "isom"))?.problem, null);
  // Its index after its media (no `faststart`): FFmpeg must seek back, so it reads a file.
  const indexLast = concat(
    ftyp("isom"),
    sizedBox("mdat", new Uint8Array(32)),
    sizedBox("moov", new Uint8Array(16)),
  );
  deepEqual(sniffVideo(indexLast), { ...sniffVideo(mp4("isom")), streamable: false });
  equal(sniffVideo(mp4("avif", "mif1", "miaf")), null, "an AVIF is an image");
  equal(sniffVideo(mp4("avis", "iso8", "mif1")), null, "an AVIF sequence is an image");
  equal(sniffVideo(mp4("qt  ")), null, "QuickTime is not an accepted brand");
  const whole = mp4("isom");
  equal(
    sniffVideo(whole.subarray(0, whole.length - 5))?.problem,
    "The MP4 file is cut short or its 'mdat' box claims more bytes (40) than the file holds (35)",
  );
  const noMoov = concat(ftyp("isom"), sizedBox("mdat", new Uint8Array(4)));
  equal(sniffVideo(noMoov)?.problem, "The MP4 file has no 'moov' box: it is incomplete");
  const shortBox = concat(
    ftyp("isom"),
    sizedBox("moov", new Uint8Array(16), 12),
    new Uint8Array(12),
  );
  equal(
    sniffVideo(shortBox)?.problem,
    "The MP4 file's box sizes do not add up (a size header lies)",
  );

  deepEqual(sniffVideo(ebml("webm", new Uint8Array(20))), {
    type: "video/webm",
    demuxer: "webm",
    problem: null,
    streamable: true,
  });
  equal(sniffVideo(ebml("matroska", new Uint8Array(20))), null, "Matroska is not WebM");
  equal(
    sniffVideo(ebml("webm", new Uint8Array(20), 1000))?.problem,
    "The WebM file is cut short or its segment claims more bytes (1000) than the file holds (20)",
  );
  equal(sniffVideo(ascii("#EXTM3U\n#EXTINF:1,\nfile:///etc/passwd\n")), null);
  equal(sniffImage(mp4("isom")), null, "an MP4 is not an image");
});
