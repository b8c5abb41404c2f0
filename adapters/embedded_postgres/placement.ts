/**
 * Where the cluster of a DATA_DIR lives. Normally in DATA_DIR/postgres. As root, PostgreSQL runs
 * as the `postgres` user; when that user cannot enter DATA_DIR (a checkout under /root or in
 * `mktemp -d`), the cluster lives in a folder of its own under CLUSTERS_DIR instead, and
 * DATA_DIR/postgres is a link to it: the link records which cluster belongs to which DATA_DIR.
 * As root, a link is followed only to a folder of CLUSTERS_DIR that belongs to that user (a link
 * to anywhere else would hand that place to PostgreSQL's user: embedded_test.ts "a pre-made
 * DATA_DIR/postgres link ...").
 */
import { basename, dirname, join, resolve } from "node:path";
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
  if (info?.isSymlink) {
    return { dir: await linkedCluster(inside, runAs, clustersDir), outside: true };
  }
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
      // An empty folder a failed start left behind: the cluster goes outside after all. Only
      // an empty one: what else the folder holds is not ours to delete.
      await Deno.remove(inside).catch((e) => {
        throw new StartupError(
          `${inside} is neither a PostgreSQL cluster nor empty (${oneLine(e)}): move it away.`,
        );
      });
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
    await makeClusterDir(dir, runAs, clustersDir);
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

/** The names this module gives clusters in CLUSTERS_DIR. */
const CLUSTER_NAME = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Makes a new cluster folder in `clustersDir` (mode 700), owned by `runAs`. */
async function makeClusterDir(dir: string, runAs: RunAs, clustersDir: string): Promise<void> {
  await Deno.mkdir(clustersDir, { recursive: true });
  await Deno.chmod(dirname(clustersDir), 0o755);
  await Deno.chmod(clustersDir, 0o755);
  // Not recursive: the folder is new (an existing one fails here), so handing it over is safe.
  await Deno.mkdir(dir, { mode: 0o700 });
  await Deno.chown(dir, runAs.uid, runAs.gid);
}

/**
 * The cluster `link` (DATA_DIR/postgres) points at. This user's own link is followed as it is
 * (nothing runs as another user). As root, only a folder of `clustersDir` with a name this
 * module gives, and either missing (made again, empty) or a folder of `runAs`'s: anything else
 * is refused, never initialised or handed over.
 */
async function linkedCluster(
  link: string,
  runAs: RunAs | undefined,
  clustersDir: string,
): Promise<string> {
  const target = resolve(dirname(link), await Deno.readLink(link));
  if (!runAs) return target;
  const home = resolve(clustersDir);
  const named = dirname(target) === home && CLUSTER_NAME.test(basename(target));
  const info = named ? await Deno.lstat(target).catch(() => null) : null;
  if (!named || (info && !(info.isDirectory && info.uid === runAs.uid))) {
    throw new StartupError(
      `${link} links to ${target}, which is not a cluster of this service (those are folders ` +
        `of "${runAs.name}" in ${home}): remove the link, or set DATA_DIR to another folder.`,
    );
  }
  if (!info) await makeClusterDir(target, runAs, clustersDir);
  return target;
}
