/**
 * The embedded database: DATA_DIR's PostgreSQL, started (and initialised on first use) with the
 * service's database in it; and a throwaway cluster for the test runner.
 */
import postgres from "postgres";
import { type Cluster, startCluster } from "./cluster.ts";
import { oneLine, postgresUser } from "./binaries.ts";
import { placeCluster } from "./placement.ts";
import { encodeBase64Url } from "../../domain/base64.ts";
import { StartupError } from "../startup.ts";

/** A running embedded PostgreSQL and the URL of its database. */
export interface EmbeddedDatabase {
  url: string;
  stop(): Promise<void>;
}

/** The database the service uses on its embedded cluster. */
const DATABASE = "board";

/** Starts DATA_DIR's PostgreSQL, initialising it (and its database) on first use. */
export async function startEmbeddedDatabase(
  dataDir: string,
  password: string,
): Promise<EmbeddedDatabase> {
  const runAs = await postgresUser();
  const { dir } = await placeCluster(dataDir, runAs);
  const cluster = await startCluster({ dir, password, runAs });
  try {
    await ensureDatabase(cluster, DATABASE);
  } catch (e) {
    await cluster.stop();
    throw new StartupError(
      `The embedded PostgreSQL in ${dir} refused the service (${oneLine(e)}): if DATA_DIR's ` +
        `secrets.json was replaced, restore it, or start afresh with a new DATA_DIR.`,
    );
  }
  return { url: cluster.url(DATABASE), stop: cluster.stop };
}

/**
 * A throwaway cluster in a new temporary folder under `parent` (else the system's), for the test
 * runner: `url` is its `postgres` database; `stop` removes every file of it.
 */
export async function startScratchCluster(parent?: string): Promise<EmbeddedDatabase> {
  const runAs = await postgresUser();
  const tmp = await Deno.makeTempDir({ dir: parent, prefix: "board-test-pg-" });
  const removeAll = async (dir?: string) => {
    if (dir) await Deno.remove(dir, { recursive: true }).catch(() => {});
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  };
  let placed: string | undefined;
  try {
    const { dir, outside } = await placeCluster(tmp, runAs);
    if (outside) placed = dir;
    const password = encodeBase64Url(crypto.getRandomValues(new Uint8Array(18)));
    const cluster = await startCluster({ dir, password, runAs, scratch: true });
    return {
      url: cluster.url("postgres"),
      stop: async () => {
        await cluster.stop();
        await removeAll(placed);
      },
    };
  } catch (e) {
    await removeAll(placed);
    throw e;
  }
}

async function ensureDatabase(cluster: Cluster, name: string): Promise<void> {
  const sql = postgres(cluster.url("postgres"), { max: 1, onnotice: () => {} });
  try {
    const found = await sql`select 1 from pg_database where datname = ${name}`;
    if (found.length === 0) await sql.unsafe(`create database "${name}"`);
  } finally {
    await sql.end({ timeout: 5 });
  }
}
