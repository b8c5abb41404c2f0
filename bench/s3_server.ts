/**
 * s3rver in its own process, so that neither the service nor the load generator pays for it:
 * one bucket `board` in a temporary folder (removed on SIGTERM). Prints
 * `{"port": n, "bucket": "board", "dir": folder}` once listening (the parent removes the
 * folder too, in case this process is killed before it can).
 */
import S3rver from "npm:s3rver@3.7.1";

const bucket = "board";
const dir = await Deno.makeTempDir({ prefix: "bench-s3-" });
const server = new S3rver({
  port: 0,
  address: "127.0.0.1",
  silent: true,
  directory: dir,
  configureBuckets: [{ name: bucket, configs: [] }],
});
const { port } = await server.run();
console.log(JSON.stringify({ port, bucket, dir }));

Deno.addSignalListener("SIGTERM", async () => {
  await server.close().catch(() => {});
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  Deno.exit(0);
});
