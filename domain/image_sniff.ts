/**
 * Identify an upload from its leading bytes and read its dimensions from the header alone.
 *
 * The declared content type and file name are attacker-controlled, so only magic bytes count,
 * and nothing here decodes pixels: the caller uses the dimensions to refuse pixel bombs before
 * any decoder sees the file. Dimensions are the coded ones (before EXIF or `irot` rotation).
 *
 * @module
 */
import { AppError } from "./errors.ts";

/** The image types the service accepts; anything else is refused at upload. */
export type ImageType = "image/jpeg" | "image/png" | "image/gif" | "image/webp" | "image/avif";

/** What the header says: the real type and the coded width and height in pixels. */
export interface SniffResult {
  type: ImageType;
  width: number;
  height: number;
}

/** The bytes are not a supported image, or one that must not reach a decoder; safe to show. */
export class UnsupportedImageError extends AppError {
  override name = "UnsupportedImageError";
  constructor(message: string) {
    super("unsupported_image", message);
  }
}

/** How many leading bytes to buffer: a JPEG's SOF can sit behind large EXIF/ICC segments. */
export const SNIFF_BYTES = 512 * 1024;

/** Sniff `head` (any prefix of the file); null when it is not an accepted image or is cut short. */
export function sniffImage(head: Uint8Array): SniffResult | null {
  const found = sniffAny(head);
  if (!found || !(found.width > 0) || !(found.height > 0)) return null;
  return found;
}

function sniffAny(b: Uint8Array): SniffResult | null {
  if (b.length >= 3 && b[0] === 0xff && b[1] === 0xd8 && b[2] === 0xff) return sniffJpeg(b);
  if (startsWith(b, 0, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return sniffPng(b);
  if (ascii(b, 0, 6) === "GIF87a" || ascii(b, 0, 6) === "GIF89a") return sniffGif(b);
  if (ascii(b, 0, 4) === "RIFF" && ascii(b, 8, 4) === "WEBP") return sniffWebp(b);
  if (ascii(b, 4, 4) === "ftyp") return sniffAvif(b);
  return null;
}

function sniffPng(b: Uint8Array): SniffResult | null {
  // IHDR must be the first chunk, so its fields sit at fixed offsets.
  if (b.length < 24 || ascii(b, 12, 4) !== "IHDR") return null;
  return { type: "image/png", width: u32be(b, 16), height: u32be(b, 20) };
}

/**
 * A GIF's size is its logical screen, grown to every frame that reaches past it: decoders (libvips'
 * libnsgif among them) allocate a canvas that holds each frame, so a 1x1 screen around a
 * 30000x30000 frame is a pixel bomb that the screen alone would hide. The frames are walked by
 * their block lengths, without decoding; a file cut short is measured by the frames it has.
 */
function sniffGif(b: Uint8Array): SniffResult | null {
  if (b.length < 10) return null;
  let width = u16le(b, 6);
  let height = u16le(b, 8);
  const colorTable = (packed: number) => (packed & 0x80 ? 3 * (2 << (packed & 7)) : 0);
  let at = 13 + (b.length > 10 ? colorTable(b[10]) : 0);
  /** The offset after a run of data sub-blocks starting at `i`, or past the end. */
  const skipSubBlocks = (i: number) => {
    while (i < b.length && b[i] !== 0) i += b[i] + 1;
    return i + 1;
  };
  while (at < b.length) {
    const block = b[at];
    if (block === 0x21) { // extension: label, then sub-blocks
      at = skipSubBlocks(at + 2);
    } else if (block === 0x2c && at + 10 <= b.length) { // image descriptor
      width = Math.max(width, u16le(b, at + 1) + u16le(b, at + 5));
      height = Math.max(height, u16le(b, at + 3) + u16le(b, at + 7));
      at = skipSubBlocks(at + 10 + colorTable(b[at + 9]) + 1); // + LZW minimum code size
    } else {
      break; // the trailer (0x3b), or bytes that are no block
    }
  }
  return { type: "image/gif", width, height };
}

/** SOF0..SOF15 minus DHT (C4), JPG (C8) and DAC (CC), which share the range. */
function isSof(marker: number): boolean {
  return marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 &&
    marker !== 0xcc;
}

function sniffJpeg(b: Uint8Array): SniffResult | null {
  // Every step moves `pos` forward, so the walk is bounded by the prefix length.
  let pos = 2;
  while (pos < b.length) {
    // Like libjpeg, skip stray bytes before a marker, then any number of 0xFF fill bytes.
    while (pos < b.length && b[pos] !== 0xff) pos++;
    while (pos < b.length && b[pos] === 0xff) pos++;
    if (pos >= b.length) return null;
    const marker = b[pos++];
    // Standalone markers carry no length: TEM, RST0..7, a repeated SOI.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd8)) continue;
    // Entropy-coded data or the end before any frame header: no dimensions to read.
    if (marker === 0x00 || marker === 0xd9 || marker === 0xda) return null;
    if (pos + 2 > b.length) return null;
    const length = u16be(b, pos);
    if (length < 2) return null;
    if (isSof(marker)) {
      // length(2) precision(1) height(2) width(2)
      if (length < 7 || pos + 7 > b.length) return null;
      return { type: "image/jpeg", width: u16be(b, pos + 5), height: u16be(b, pos + 3) };
    }
    pos += length;
  }
  return null;
}

function sniffWebp(b: Uint8Array): SniffResult | null {
  const chunk = ascii(b, 12, 4);
  if (chunk === "VP8 ") {
    // Key frame: 3-byte frame tag (bit 0 clear), start code 9D 01 2A, then 14-bit sizes.
    if (b.length < 30 || (b[20] & 1) !== 0 || !startsWith(b, 23, [0x9d, 0x01, 0x2a])) return null;
    return { type: "image/webp", width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff };
  }
  if (chunk === "VP8L") {
    // Signature 0x2F, then width-1 and height-1 packed as two 14-bit fields.
    if (b.length < 25 || b[20] !== 0x2f) return null;
    const bits = u32le(b, 21);
    return { type: "image/webp", width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 };
  }
  if (chunk === "VP8X") {
    // Flags(1) reserved(3), then canvas width-1 and height-1 as 24-bit fields.
    if (b.length < 30) return null;
    return { type: "image/webp", width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 };
  }
  return null;
}

interface Box {
  type: string;
  /** Where the payload starts (after the header). */
  start: number;
  /** Where the box ends, clamped to what we have. */
  end: number;
}

/** ISO-BMFF boxes between `from` and `to`; stops at the first malformed header. */
function* boxes(b: Uint8Array, from: number, to: number): Generator<Box> {
  let pos = from;
  while (pos + 8 <= to) {
    let size = u32be(b, pos);
    let header = 8;
    if (size === 1) {
      if (pos + 16 > to) return;
      size = u32be(b, pos + 8) * 2 ** 32 + u32be(b, pos + 12);
      header = 16;
    } else if (size === 0) {
      size = to - pos;
    }
    if (size < header) return;
    yield { type: ascii(b, pos + 4, 4), start: pos + header, end: Math.min(pos + size, to) };
    pos += size;
  }
}

function child(b: Uint8Array, parent: Box, type: string, skip = 0): Box | null {
  for (const box of boxes(b, parent.start + skip, parent.end)) if (box.type === type) return box;
  return null;
}

function sniffAvif(b: Uint8Array): SniffResult | null {
  const all: Box = { type: "", start: 0, end: b.length };
  const top = [...boxes(b, 0, b.length)];
  const ftyp = top[0];
  if (!ftyp || ftyp.type !== "ftyp" || ftyp.end - ftyp.start < 8) return null;
  // Major brand, then (after the minor version) the compatible brands.
  const brands = [ascii(b, ftyp.start, 4)];
  for (let p = ftyp.start + 8; p + 4 <= ftyp.end; p += 4) brands.push(ascii(b, p, 4));
  if (!brands.includes("avif") && !brands.includes("avis")) return null;
  const meta = child(b, all, "meta");
  if (!meta) return null;
  // meta is a FullBox: 4 bytes of version and flags precede its children.
  const iprp = child(b, meta, "iprp", 4);
  const ipco = iprp && child(b, iprp, "ipco");
  if (!iprp || !ipco) return null;
  const props = [...boxes(b, ipco.start, ipco.end)];
  // Prefer the ispe tied to the primary item: a grid's tiles and alpha planes have their own.
  const wanted = primaryPropertyIndexes(b, meta, iprp);
  const ispe = props.find((p, i) => p.type === "ispe" && (wanted?.includes(i + 1) ?? true)) ??
    props.find((p) => p.type === "ispe");
  if (!ispe || ispe.start + 12 > ispe.end) return null;
  return { type: "image/avif", width: u32be(b, ispe.start + 4), height: u32be(b, ispe.start + 8) };
}

/** 1-based ipco indexes associated with the primary item, or null when they cannot be read. */
function primaryPropertyIndexes(b: Uint8Array, meta: Box, iprp: Box): number[] | null {
  const pitm = child(b, meta, "pitm", 4);
  const ipma = child(b, iprp, "ipma");
  if (!pitm || !ipma || pitm.start + 6 > pitm.end) return null;
  const primary = b[pitm.start] === 0 ? u16be(b, pitm.start + 4) : u32be(b, pitm.start + 4);
  const version = b[ipma.start];
  const wide = (b[ipma.start + 3] & 1) === 1;
  let pos = ipma.start + 4;
  if (pos + 4 > ipma.end) return null;
  const entries = u32be(b, pos);
  pos += 4;
  for (let e = 0; e < entries; e++) {
    const idSize = version < 1 ? 2 : 4;
    if (pos + idSize + 1 > ipma.end) return null;
    const item = idSize === 2 ? u16be(b, pos) : u32be(b, pos);
    const count = b[pos + idSize];
    pos += idSize + 1;
    const indexes: number[] = [];
    for (let a = 0; a < count; a++, pos += wide ? 2 : 1) {
      if (pos + (wide ? 2 : 1) > ipma.end) return null;
      // The top bit flags the property as essential; the rest is the index.
      indexes.push(wide ? u16be(b, pos) & 0x7fff : b[pos] & 0x7f);
    }
    if (item === primary) return indexes;
  }
  return null;
}

/**
 * Whether `bytes` is an animated WebP: its VP8X header has the animation flag (bit 1). Such a
 * WebP gets an MP4 and an animated preview as a GIF does (services/video_renditions.ts).
 */
export function isAnimatedWebp(bytes: Uint8Array): boolean {
  return ascii(bytes, 0, 4) === "RIFF" && ascii(bytes, 8, 4) === "WEBP" &&
    ascii(bytes, 12, 4) === "VP8X" && bytes.length > 20 && (bytes[20] & 0x02) !== 0;
}

/** The video types the service accepts, when FFmpeg is there to probe them. */
export type VideoType = "video/mp4" | "video/webm";

/**
 * What the container's header says of a video: its type, the FFmpeg demuxer that must read it (no
 * other is ever tried, so a playlist or a script dressed as a video never reaches theirs), and
 * `problem`, a client-safe sentence when its structure is cut short or its sizes do not add up.
 */
export interface VideoSniffResult {
  type: VideoType;
  demuxer: "mov" | "webm";
  problem: string | null;
  /**
   * Whether FFmpeg can read it front to back from a pipe, never seeking back: a WebM, or an MP4
   * whose index (`moov`) comes before its media (`mdat`, as `faststart` writes it). False with a
   * problem.
   */
  streamable: boolean;
}

/**
 * The ISO base media brands of an MP4 video (major or compatible). HEIF and AVIF brands are not
 * here: an AVIF (still or sequence) is an image, sniffed by sniffImage.
 */
const MP4_BRANDS = new Set([
  "isom",
  "iso2",
  "iso3",
  "iso4",
  "iso5",
  "iso6",
  "mp41",
  "mp42",
  "avc1",
  "hvc1",
  "hev1",
  "av01",
  "dash",
  "M4V ",
  "mmp4",
  "MSNV",
]);

/**
 * Sniff a whole file as an MP4 (an `ftyp` with an MP4 brand) or a WebM (an EBML header whose
 * DocType is `webm`); null when it is neither. The top-level structure is walked by its sizes, so
 * a truncated file or one whose size header lies is named before FFmpeg sees it.
 */
export function sniffVideo(b: Uint8Array): VideoSniffResult | null {
  if (ascii(b, 4, 4) === "ftyp") return sniffMp4(b);
  if (startsWith(b, 0, [0x1a, 0x45, 0xdf, 0xa3])) return sniffWebm(b);
  return null;
}

function sniffMp4(b: Uint8Array): VideoSniffResult | null {
  const size = u32be(b, 0);
  if (size < 16 || size > b.length) return null;
  const brands = [ascii(b, 8, 4)];
  for (let p = 16; p + 4 <= size; p += 4) brands.push(ascii(b, p, 4));
  if (brands.includes("avif") || brands.includes("avis")) return null;
  if (!brands.some((brand) => MP4_BRANDS.has(brand))) return null;
  const found = { type: "video/mp4", demuxer: "mov", streamable: false } as const;
  let pos = 0;
  let moov = false;
  let mdat = false;
  let streamable = false;
  while (pos < b.length) {
    if (pos + 8 > b.length) return { ...found, problem: "The MP4 file is cut short" };
    const type = ascii(b, pos + 4, 4);
    if (!/^[\x20-\x7e]{4}$/.test(type)) {
      return { ...found, problem: "The MP4 file's box sizes do not add up (a size header lies)" };
    }
    let boxSize = u32be(b, pos);
    let header = 8;
    if (boxSize === 1) {
      if (pos + 16 > b.length) return { ...found, problem: "The MP4 file is cut short" };
      boxSize = u32be(b, pos + 8) * 2 ** 32 + u32be(b, pos + 12);
      header = 16;
    } else if (boxSize === 0) {
      boxSize = b.length - pos;
    }
    if (boxSize < header) {
      return { ...found, problem: `The MP4 file's '${type}' box has an impossible size` };
    }
    if (pos + boxSize > b.length) {
      return {
        ...found,
        problem: `The MP4 file is cut short or its '${type}' box claims more bytes ` +
          `(${boxSize}) than the file holds (${b.length - pos})`,
      };
    }
    if (type === "moov" && !moov) {
      moov = true;
      streamable = !mdat;
    }
    if (type === "mdat") mdat = true;
    pos += boxSize;
  }
  if (!moov) return { ...found, problem: "The MP4 file has no 'moov' box: it is incomplete" };
  return { ...found, problem: null, streamable };
}

/** An EBML variable-length integer at `at`: its value (null when all ones: unknown) and length. */
function vint(b: Uint8Array, at: number): { value: number | null; length: number } | null {
  if (at >= b.length || b[at] === 0) return null;
  const length = Math.clz32(b[at]) - 23;
  if (at + length > b.length) return null;
  let value = b[at] & (0xff >> length);
  let ones = value === 0xff >> length;
  for (let i = 1; i < length; i++) {
    value = value * 256 + b[at + i];
    ones &&= b[at + i] === 0xff;
  }
  return { value: ones ? null : value, length };
}

function sniffWebm(b: Uint8Array): VideoSniffResult | null {
  const headerSize = vint(b, 4);
  if (!headerSize || headerSize.value === null) return null;
  const start = 4 + headerSize.length;
  const end = start + headerSize.value;
  if (end > b.length) return null;
  // The header's children: DocType (0x4282) says webm or matroska.
  let docType = "";
  for (let pos = start; pos < end;) {
    const idLength = vint(b, pos)?.length;
    if (!idLength) return null;
    const id = b.subarray(pos, pos + idLength);
    const size = vint(b, pos + idLength);
    if (!size || size.value === null) return null;
    const data = pos + idLength + size.length;
    if (idLength === 2 && id[0] === 0x42 && id[1] === 0x82) {
      docType = ascii(b, data, Math.min(size.value, 16)).replace(/\0+$/, "");
    }
    pos = data + size.value;
  }
  if (docType !== "webm") return null;
  const found = { type: "video/webm", demuxer: "webm", streamable: false } as const;
  if (!startsWith(b, end, [0x18, 0x53, 0x80, 0x67])) {
    return { ...found, problem: "The WebM file has no segment after its header" };
  }
  const segment = vint(b, end + 4);
  if (!segment) return { ...found, problem: "The WebM file is cut short" };
  if (segment.value !== null && end + 4 + segment.length + segment.value > b.length) {
    return {
      ...found,
      problem: `The WebM file is cut short or its segment claims more bytes ` +
        `(${segment.value}) than the file holds (${b.length - end - 4 - segment.length})`,
    };
  }
  return { ...found, problem: null, streamable: true };
}

function startsWith(b: Uint8Array, at: number, bytes: number[]): boolean {
  return b.length >= at + bytes.length && bytes.every((v, i) => b[at + i] === v);
}

function ascii(b: Uint8Array, at: number, n: number): string {
  if (b.length < at + n) return "";
  return String.fromCharCode(...b.subarray(at, at + n));
}

function u16be(b: Uint8Array, at: number): number {
  return (b[at] << 8) | b[at + 1];
}

function u16le(b: Uint8Array, at: number): number {
  return b[at] | (b[at + 1] << 8);
}

function u24le(b: Uint8Array, at: number): number {
  return b[at] | (b[at + 1] << 8) | (b[at + 2] << 16);
}

function u32be(b: Uint8Array, at: number): number {
  return ((b[at] << 24) >>> 0) + (b[at + 1] << 16) + (b[at + 2] << 8) + b[at + 3];
}

function u32le(b: Uint8Array, at: number): number {
  return (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
}
