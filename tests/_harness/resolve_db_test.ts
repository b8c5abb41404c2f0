/**
 * The embedded PostgreSQL of a test run lives in memory when the machine has a roomy tmpfs at
 * /dev/shm, and in the system's temporary folder otherwise.
 */
import assert from "node:assert/strict";
import type { StatsFs } from "node:fs";
import postgres from "postgres";
import { scratchParent, startEmbedded } from "./resolve_db.ts";

const TMPFS = 0x01021994;
const EXT4 = 0xef53;
const GiB = 1024 ** 3;

/** A statfs answer of file-system type `type` with `free` bytes available. */
function fake(type: number, free: number): () => StatsFs {
  return () => ({ type, bsize: 4096, bavail: free / 4096 }) as StatsFs;
}

Deno.test("scratchParent() chooses /dev/shm only when it is a tmpfs with 2 GiB available", () => {
  assert.equal(scratchParent(fake(TMPFS, 24 * GiB)), "/dev/shm");
  assert.equal(scratchParent(fake(TMPFS, 2 * GiB)), "/dev/shm");
  assert.equal(scratchParent(fake(TMPFS, 64 * 1024 ** 2)), undefined, "a container's 64 MB");
  assert.equal(scratchParent(fake(EXT4, 24 * GiB)), undefined, "a disk");
  const missing = () => {
    throw new Deno.errors.NotFound("no /dev/shm");
  };
  assert.equal(scratchParent(missing), undefined);
});

Deno.test("startEmbedded() keeps its cluster where scratchParent() says, and removes it", async () => {
  const parent = scratchParent() ?? Deno.env.get("TMPDIR") ?? "/tmp";
  const server = await startEmbedded();
  let dir = "";
  try {
    const sql = postgres(server.url, { max: 1, onnotice: () => {} });
    try {
      [{ data_directory: dir }] = await sql`show data_directory`;
    } finally {
      await sql.end({ timeout: 5 });
    }
  } finally {
    await server.stop();
  }
  assert.ok(dir.startsWith(`${parent}/board-test-pg-`), `${dir} is not under ${parent}`);
  await assert.rejects(Deno.stat(dir), Deno.errors.NotFound);
});
