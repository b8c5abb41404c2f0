/**
 * The harness's s3rver keeps no folder-shaped race of its own: a put into a folder whose last
 * object is being deleted lands, and nothing escapes s3rver uncaught (S3 has no folders; s3rver's
 * filesystem store removes the directories a delete leaves empty).
 */
import assert from "node:assert/strict";
import { disposeS3, startS3 } from "./s3.ts";

Deno.test("a put racing the delete of its folder's last object lands, in every round", async () => {
  const s3 = await startS3();
  try {
    const bytes = new TextEncoder().encode("kept");
    const opts = { contentType: "text/plain", contentLength: bytes.length };
    const lost: string[] = [];
    for (let round = 0; round < 200; round++) {
      await s3.store.put(`r${round}/old`, bytes, opts);
      await Promise.all([
        s3.store.delete(`r${round}/old`),
        s3.store.put(`r${round}/new`, bytes, opts),
      ]);
      if (!await s3.store.head(`r${round}/new`)) lost.push(`r${round}/new`);
    }
    assert.deepEqual(lost, []);
  } finally {
    await disposeS3(s3);
  }
});
