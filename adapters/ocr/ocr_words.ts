/**
 * From the engine's word boxes to caption text. Both engines measured (tesseract.js and the
 * tesseract CLI) speak TSV, so the choice of words is the same code for either: drop junk and
 * unsure words, keep one reading where several variants of a band found the same word, and
 * put the words back in reading order.
 *
 * @module
 */

/** One word as the engine saw it, in the pixels of the picture it read. */
export interface OcrWord {
  text: string;
  conf: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

/** The word rows (level 5) of Tesseract's TSV output. */
export function parseTsv(tsv: string): OcrWord[] {
  const words: OcrWord[] = [];
  for (const line of tsv.split("\n")) {
    const f = line.split("\t");
    if (f[0] !== "5" || f.length < 12) continue;
    const text = f.slice(11).join(" ").trim();
    if (text === "") continue;
    words.push({
      text,
      conf: Number(f[10]),
      left: Number(f[6]),
      top: Number(f[7]),
      width: Number(f[8]),
      height: Number(f[9]),
    });
  }
  return words;
}

/**
 * The word without surrounding punctuation, or null for what is not a word: punctuation only,
 * or one character other than "I" and "A" (specks read as letters are almost always one).
 */
export function cleanWord(text: string): string | null {
  const word = text.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, "");
  if (!/[\p{L}\p{N}]/u.test(word)) return null;
  if (word.length === 1 && !/^[IAia]$/.test(word)) return null;
  return word;
}

const area = (w: OcrWord) => Math.max(1, w.width) * Math.max(1, w.height);

function overlap(a: OcrWord, b: OcrWord): number {
  const x = Math.min(a.left + a.width, b.left + b.width) - Math.max(a.left, b.left);
  const y = Math.min(a.top + a.height, b.top + b.height) - Math.max(a.top, b.top);
  return x <= 0 || y <= 0 ? 0 : (x * y) / Math.min(area(a), area(b));
}

function verticalOverlap(a: OcrWord, b: OcrWord): number {
  const y = Math.min(a.top + a.height, b.top + b.height) - Math.max(a.top, b.top);
  return y / Math.max(1, Math.min(a.height, b.height));
}

/**
 * One band's words from all its variants (same geometry): each word that passes `floor` and
 * `cleanWord`, the best-confidence reading where boxes of several variants cover one another,
 * in reading order (lines top to bottom, words left to right); none when all are one letter.
 */
export function mergeReadings(readings: OcrWord[][], floor: number): OcrWord[] {
  const candidates = readings.flat()
    .filter((w) => w.conf >= floor)
    .map((w) => ({ ...w, text: cleanWord(w.text) ?? "" }))
    .filter((w) => w.text !== "")
    .sort((a, b) => b.conf - a.conf);
  const kept: OcrWord[] = [];
  for (const w of candidates) {
    if (!kept.some((k) => overlap(k, w) > 0.4)) kept.push(w);
  }
  // "I" and "A" are words in a caption, but alone in a band they are a speck read as a letter.
  if (kept.every((w) => w.text.length === 1)) return [];
  // Lines: words that share most of their height and sit near each other (a caption tilted by
  // a few degrees still chains along its line, while the line below does not join it).
  const line = kept.map((_, i) => i);
  const find = (i: number): number => line[i] === i ? i : (line[i] = find(line[i]));
  for (let i = 0; i < kept.length; i++) {
    for (let j = i + 1; j < kept.length; j++) {
      const [a, b] = [kept[i], kept[j]];
      const gap = Math.max(a.left, b.left) - Math.min(a.left + a.width, b.left + b.width);
      if (verticalOverlap(a, b) >= 0.5 && gap < 3 * Math.max(a.height, b.height)) {
        line[find(i)] = find(j);
      }
    }
  }
  const groups = new Map<number, OcrWord[]>();
  kept.forEach((w, i) => groups.set(find(i), [...groups.get(find(i)) ?? [], w]));
  const middle = (ws: OcrWord[]) => ws.reduce((s, w) => s + w.top + w.height / 2, 0) / ws.length;
  return [...groups.values()]
    .sort((a, b) => middle(a) - middle(b))
    .flatMap((ws) => ws.sort((a, b) => a.left - b.left));
}
