/**
 * The child s3rver stops on SIGTERM, whatever its clients left open: a request still half sent
 * when a test ends (an upload the service abandoned mid-body) must not hold the file's end.
 */
import assert from "node:assert/strict";
import { disposeS3 } from "./s3.ts";
import { startS3Process } from "./s3_process.ts";

Deno.test("stop() ends the s3rver child by its own SIGTERM handler while a request is half sent", async () => {
  const s3 = await startS3Process();
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: s3.port });
  try {
    const head =
      `PUT /${s3.bucket}/half HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n`;
    await conn.write(new TextEncoder().encode(`${head}only the first bytes`));
    // The server has the request once it answers another: it reads in order.
    await s3.store.check();
    await s3.stop();
    // Exit code 0 is the handler's Deno.exit(0); the hang guard's SIGKILL would show as 137.
    const { code, signal } = await s3.status();
    assert.deepEqual({ code, signal }, { code: 0, signal: null });
  } finally {
    conn.close();
    await disposeS3(s3); // stops the child too if the test failed before it did
  }
});
