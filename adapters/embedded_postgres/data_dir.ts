/**
 * DATA_DIR of the embedded default: one process owns it at a time (an exclusive lock on
 * DATA_DIR/.lock), and the generated credentials are kept in it (secrets.json).
 */
import { join, resolve } from "node:path";
import { encodeBase64Url } from "../../domain/base64.ts";
import { StartupError } from "../startup.ts";

/** Another process already uses this DATA_DIR. */
export class DataDirLockedError extends StartupError {
  override name = "DataDirLockedError";
}

/**
 * Takes DATA_DIR for this process, or throws DataDirLockedError. The lock lives until exit. A
 * DATA_DIR every user can write is refused: anyone could put links in it (`postgres`, `.lock`,
 * `secrets.json`) for this process to follow (embedded_test.ts "a DATA_DIR every user can write").
 */
export async function lockDataDir(dataDir: string): Promise<Deno.FsFile> {
  let file: Deno.FsFile;
  try {
    await Deno.mkdir(dataDir, { recursive: true, mode: 0o755 });
    const mode = (await Deno.stat(dataDir)).mode ?? 0;
    if (mode & 0o002) {
      throw new StartupError(
        `DATA_DIR ${resolve(dataDir)} can be written by every user (mode ${
          (mode & 0o7777).toString(8)
        }): make it yours alone (chmod o-w) or set DATA_DIR to another folder.`,
      );
    }
    file = await Deno.open(join(dataDir, ".lock"), { create: true, write: true });
  } catch (e) {
    if (e instanceof StartupError) throw e;
    const why = e instanceof Error ? e.message : String(e);
    throw new StartupError(
      `DATA_DIR ${
        resolve(dataDir)
      } cannot be used (${why}): set DATA_DIR to a folder you can write.`,
    );
  }
  // flock() blocks while another process holds it: give up quickly instead of waiting.
  const acquired = await Promise.race([
    file.lock(true).then(() => true),
    new Promise<false>((r) => setTimeout(() => r(false), 300)),
  ]);
  if (!acquired) {
    throw new DataDirLockedError(
      `Another process is already using DATA_DIR ${
        resolve(dataDir)
      }; stop it first or set another DATA_DIR.`,
    );
  }
  await file.truncate(0);
  await file.write(new TextEncoder().encode(`${Deno.pid}\n`));
  return file;
}

/** Generated credentials of the embedded default. */
export interface LocalSecrets {
  adminPassword: string;
  jwtSecret: string;
  /** The embedded cluster's superuser password ("postgres" in a DATA_DIR made before it was kept). */
  databasePassword: string;
  /** True when they were made by this call (the password is then printed at start). */
  created: boolean;
}

/** Reads DATA_DIR/secrets.json, creating it (mode 600) the first time. */
export async function localSecrets(dataDir: string): Promise<LocalSecrets> {
  const path = join(dataDir, "secrets.json");
  try {
    const saved = JSON.parse(await Deno.readTextFile(path));
    return {
      adminPassword: saved.admin_password,
      jwtSecret: saved.jwt_secret,
      databasePassword: saved.database_password ?? "postgres",
      created: false,
    };
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const random = (n: number) => encodeBase64Url(crypto.getRandomValues(new Uint8Array(n)));
  const secrets = {
    admin_password: random(12),
    jwt_secret: random(48),
    database_password: random(24),
  };
  await Deno.writeTextFile(path, JSON.stringify(secrets, null, 2) + "\n", { mode: 0o600 });
  return {
    adminPassword: secrets.admin_password,
    jwtSecret: secrets.jwt_secret,
    databasePassword: secrets.database_password,
    created: true,
  };
}
