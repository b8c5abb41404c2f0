/**
 * Copying in the browser (islands bundle this file): text, and an image as PNG, the one image
 * type browsers put on the clipboard. A refusal (no Clipboard API on plain http, a denied
 * permission, an old browser) is a ClipboardRefused, so the caller can offer the text to copy by
 * hand instead.
 */

/** The Clipboard API is missing or refused this write. */
export class ClipboardRefused extends Error {
  override name = "ClipboardRefused";
}

/** Puts `text` on the clipboard, or throws ClipboardRefused. */
export async function copyText(text: string): Promise<void> {
  if (!navigator.clipboard?.writeText) throw new ClipboardRefused("No Clipboard API here");
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) {
    throw new ClipboardRefused("The browser refused the clipboard", { cause: e });
  }
}

/** The image at `url` (same origin) decoded and re-encoded as PNG; a GIF gives its first frame. */
export async function pngOf(url: string): Promise<Blob> {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`Could not load the image (HTTP ${res.status})`);
  const bitmap = await createImageBitmap(await res.blob());
  try {
    const canvas = document.createElement("canvas");
    canvas.width = bitmap.width;
    canvas.height = bitmap.height;
    canvas.getContext("2d")!.drawImage(bitmap, 0, 0);
    return await new Promise<Blob>((resolve, reject) =>
      canvas.toBlob(
        (b) => b ? resolve(b) : reject(new Error("Could not convert the image")),
        "image/png",
      )
    );
  } finally {
    bitmap.close();
  }
}

/**
 * Puts the image at `url` on the clipboard as PNG. The clipboard item is made at once, with the
 * PNG still on its way, so the click's permission to write is not lost while it converts.
 * Throws ClipboardRefused when the browser will not, and the conversion's error when that fails.
 */
export async function copyImageAsPng(url: string): Promise<void> {
  if (!navigator.clipboard?.write || typeof ClipboardItem === "undefined") {
    throw new ClipboardRefused("No Clipboard API for images here");
  }
  const png = pngOf(url);
  const converted = png.then(() => null, (e: Error) => e);
  try {
    await navigator.clipboard.write([new ClipboardItem({ "image/png": png })]);
  } catch (e) {
    const failed = await converted;
    if (failed) throw failed;
    throw new ClipboardRefused("The browser refused the clipboard", { cause: e });
  }
}
