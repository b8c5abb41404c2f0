/** Reaction faces for the browser tests and their screenshots. */
import { Buffer } from "node:buffer";
import sharp from "sharp";

/** The expressions `face()` draws. */
export type Face = "happy" | "sad" | "surprised" | "wink" | "angry";

/** A reaction face on a gradient, drawn as SVG and encoded by sharp (unique per colour pair). */
export async function face(kind: Face, w: number, h: number, c1: string, c2: string) {
  const r = Math.round(Math.min(w, h) * 0.3);
  const eye = (x: number, wink = false) =>
    wink
      ? `<path d="M ${x - r * 0.12} ${-r * 0.25} h ${r * 0.24}" stroke="#3b2a00" stroke-width="${
        r * 0.08
      }" stroke-linecap="round"/>`
      : `<circle cx="${x}" cy="${-r * 0.25}" r="${
        r * (kind === "surprised" ? 0.13 : 0.09)
      }" fill="#3b2a00"/>`;
  const mouth = {
    happy: `<path d="M ${-r * 0.5} ${r * 0.2} Q 0 ${r * 0.8} ${r * 0.5} ${r * 0.2}"/>`,
    wink: `<path d="M ${-r * 0.45} ${r * 0.25} Q 0 ${r * 0.7} ${r * 0.45} ${r * 0.25}"/>`,
    sad: `<path d="M ${-r * 0.45} ${r * 0.55} Q 0 ${r * 0.1} ${r * 0.45} ${r * 0.55}"/>`,
    surprised: `<ellipse cx="0" cy="${r * 0.4}" rx="${r * 0.16}" ry="${r * 0.24}"/>`,
    angry: `<path d="M ${-r * 0.4} ${r * 0.45} h ${r * 0.8}"/>` +
      `<path d="M ${-r * 0.5} ${-r * 0.5} L ${-r * 0.15} ${-r * 0.35}"/>` +
      `<path d="M ${r * 0.5} ${-r * 0.5} L ${r * 0.15} ${-r * 0.35}"/>`,
  }[kind];
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}">
    <defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1">
      <stop offset="0" stop-color="${c1}"/><stop offset="1" stop-color="${c2}"/>
    </linearGradient></defs>
    <rect width="100%" height="100%" fill="url(#g)"/>
    <g transform="translate(${w / 2} ${h / 2})">
      <circle r="${r}" fill="#ffd43b" stroke="#3b2a00" stroke-width="${r * 0.05}"/>
      ${eye(-r * 0.35)}${eye(r * 0.35, kind === "wink")}
      <g fill="${kind === "surprised" ? "#3b2a00" : "none"}" stroke="#3b2a00"
        stroke-width="${r * 0.08}" stroke-linecap="round">${mouth}</g>
    </g></svg>`;
  return new Uint8Array(await sharp(Buffer.from(svg)).png().toBuffer());
}
