/**
 * The import's credential: `--username`/`--password`, else IMAGEBOARD_USERNAME (default
 * `admin`) and IMAGEBOARD_PASSWORD, else a prompt on the terminal that does not echo.
 */

/** A bad command line or an unusable setting: printed, exit code 2. */
export class UsageError extends Error {
  override name = "UsageError";
}

/** Reads a line from the terminal without echoing it. */
async function promptHidden(question: string): Promise<string | null> {
  if (!Deno.stdin.isTerminal()) return null;
  const enc = new TextEncoder();
  await Deno.stderr.write(enc.encode(question));
  Deno.stdin.setRaw(true);
  const chars: string[] = [];
  const buf = new Uint8Array(64);
  const decoder = new TextDecoder();
  try {
    for (;;) {
      const n = await Deno.stdin.read(buf);
      if (n === null) break;
      const text = decoder.decode(buf.subarray(0, n));
      for (const ch of text) {
        if (ch === "\r" || ch === "\n") return chars.join("");
        if (ch === "\u0003") throw new UsageError("cancelled");
        if (ch === "\u007f" || ch === "\b") chars.pop();
        else chars.push(ch);
      }
    }
    return chars.join("");
  } finally {
    Deno.stdin.setRaw(false);
    await Deno.stderr.write(enc.encode("\n"));
  }
}

/** The credential, from the options, the environment or a prompt. */
export async function credentials(values: { username?: string; password?: string }) {
  const username = values.username ?? Deno.env.get("IMAGEBOARD_USERNAME") ?? "admin";
  const password = values.password ?? Deno.env.get("IMAGEBOARD_PASSWORD") ??
    await promptHidden(`Password for ${username}: `);
  if (!password) {
    throw new UsageError(
      "no password: pass --password, set IMAGEBOARD_PASSWORD, or run it on a terminal",
    );
  }
  return { username, password };
}
