/**
 * Where the cluster of a DATA_DIR lives. Normally in DATA_DIR/postgres. As root, PostgreSQL runs
 * as the `postgres` user; when that user cannot enter DATA_DIR (a checkout under /root or in
 * `mktemp -d`), the cluster lives in a folder of its own under CLUSTERS_DIR instead, and
 * DATA_DIR/postgres is a link to it: the link records which cluster belongs to which DATA_DIR.
 */
import { dirname, join, resolve } from "node:path";
import { StartupError } from "../startup.ts";
import { canEnter, exists, oneLine, type RunAs } from "./binaries.ts";

/** Root's clusters for DATA_DIRs the postgres user cannot enter. */
export const CLUSTERS_DIR = "/var/lib/reaction-board/clusters";

/** The cluster's folder, and whether it lives outside DATA_DIR. */
export interface Placement {
  dir: string;
  outside: boolean;
}

/** Finds (or, on first use, chooses) the cluster folder of `dataDir` for `runAs`. */
export async function placeCluster(
  dataDir: string,
  runAs: RunAs | undefined,
  clustersDir = CLUSTERS_DIR,
): Promise<Placement> {
  const root = resolve(dataDir);
  const inside = join(root, "postgres");
  const info = await Deno.lstat(inside).catch(() => null);
  if (info?.isSymlink) return { dir: resolve(root, await Deno.readLink(inside)), outside: true };
  if (!runAs) return { dir: inside, outside: false };

  // DATA_DIR is ours: let the postgres user pass through it (not list it) when it can reach it.
  if (!(await canEnter(root, runAs)) && (await canEnter(dirname(root), runAs))) {
    const mode = (await Deno.stat(root)).mode ?? 0o700;
    await Deno.chmod(root, (mode & 0o7777) | 0o001);
  }
  const reachable = await canEnter(root, runAs);
  if (info) {
    if (reachable || !(await exists(join(inside, "PG_VERSION")))) {
      if (reachable) return { dir: inside, outside: false };
      // An empty folder a failed start left behind: the cluster goes outside after all.
      await Deno.remove(inside, { recursive: true });
    } else {
      throw new StartupError(
        `The embedded PostgreSQL runs as the user "${runAs.name}", which cannot enter ${root}: ` +
          `let it (chmod o+x on that folder and those above it) or run as an ordinary user.`,
      );
    }
  }
  if (reachable) return { dir: inside, outside: false };
  const dir = join(clustersDir, crypto.randomUUID());
  try {
    await Deno.mkdir(clustersDir, { recursive: true });
    await Deno.chmod(dirname(clustersDir), 0o755);
    await Deno.chmod(clustersDir, 0o755);
    await Deno.mkdir(dir, { mode: 0o700 });
    await Deno.chown(dir, runAs.uid, runAs.gid);
    await Deno.symlink(dir, inside);
  } catch (e) {
    await Deno.remove(dir).catch(() => {});
    throw new StartupError(
      `The user "${runAs.name}" that runs the embedded PostgreSQL cannot enter ${root}, and ` +
        `its cluster could not be made in ${clustersDir} instead (${oneLine(e)}): run as an ` +
        `ordinary user, put DATA_DIR where "${runAs.name}" can enter, or set DATABASE_URL.`,
    );
  }
  return { dir, outside: true };
}
