/**
 * Start-up messages for the person at the terminal: failures that are the operator's to fix
 * (printed as a message, not a stack trace), and the two plain lines a first start prints before
 * and beside the JSON logs (where the data lives; where the board listens and how to sign in).
 */

/** A start-up failure with a message that says what to change. */
export class StartupError extends Error {
  override name = "StartupError";
}

/** Runs a start-up step; a StartupError prints its message and ends the process with 1. */
export async function orExit<T>(step: () => T | Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (e) {
    if (!(e instanceof StartupError)) throw e;
    console.error(e.message);
    Deno.exit(1);
  }
}

/** Where the service keeps its records and images, as the configuration says. */
export interface Placement {
  DATA_DIR: string;
  DATABASE_URL?: string;
  S3_BUCKET?: string;
}

/**
 * How to sign in. `password` is set only when the embedded default generated it: a configured
 * ADMIN_PASSWORD is never printed (tests/main_test.ts, "ADMIN_USERNAME, ...").
 */
export interface SignIn {
  username: string;
  password?: string;
  /** The file that keeps a generated password. */
  keptIn?: string;
}

/** The first line of a start, said before anything is opened. Names no secret. */
export function startingLine(config: Placement): string {
  const db = config.DATABASE_URL ? "the PostgreSQL of DATABASE_URL" : "an embedded PostgreSQL";
  const local = [!config.DATABASE_URL && "its data", !config.S3_BUCKET && "images"]
    .filter(Boolean);
  const where = [
    local.length ? `keeping ${local.join(" and ")} under ${config.DATA_DIR}` : "",
    config.S3_BUCKET ? `images in the S3 bucket "${config.S3_BUCKET}"` : "",
  ].filter(Boolean);
  return `Reaction board is starting on ${db}, ${where.join(", ")}.`;
}

/** The line said once the board listens: an address to open, and how to sign in there. */
export function listeningLine(addr: { hostname: string; port: number }, signIn: SignIn): string {
  // A wildcard address is not one a browser can open; this machine's name for itself is.
  const host = ["0.0.0.0", "::"].includes(addr.hostname)
    ? "localhost"
    : addr.hostname.includes(":")
    ? `[${addr.hostname}]`
    : addr.hostname;
  const how = signIn.password
    ? `with password ${signIn.password} (kept in ${signIn.keptIn})`
    : "with the password set in ADMIN_PASSWORD";
  return `Listening on http://${host}:${addr.port} — sign in as ${signIn.username} ${how}.`;
}

/** Prints a line for the person at the terminal, on stderr: stdout stays JSON lines only. */
export function say(line: string): void {
  console.error(line);
}
