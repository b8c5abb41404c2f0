import assert from "node:assert/strict";
import { lockedMessage } from "./LoginForm.tsx";
import { describeUpload } from "./Uploader.tsx";

Deno.test("describeUpload() puts every upload outcome in words", () => {
  const say = (status: number, body: Record<string, unknown> | null = null) =>
    describeUpload({ status, body }).message;
  assert.equal(say(201, { short_id: "abcdEFGH" }), "Uploaded");
  assert.equal(say(200, { short_id: "abcdEFGH", tags: [] }), "Already here");
  const tags = (names: string[]) => names.map((name) => ({ name, image_count: 1 }));
  assert.equal(say(200, { tags: tags(["cat", "dog"]) }), "Already here, tagged cat, dog");
  assert.equal(
    say(200, { tags: tags(["a", "b", "c", "d", "e", "f", "g"]) }),
    "Already here, tagged a, b, c, d, e +2",
  );
  assert.equal(
    say(413, { code: "upload_too_large", max_bytes: 20971520 }),
    "Too large (max 20 MB)",
  );
  assert.equal(say(415, { code: "unsupported_image", detail: "x" }), "Not a supported image");
  assert.equal(
    say(422, { code: "too_many_pixels", detail: "The image is 1x1" }),
    "Too many pixels",
  );
  assert.equal(say(422, { detail: "Tag names cannot be empty" }), "Tag names cannot be empty");
  assert.equal(say(503, { code: "busy" }), "Server busy, try again");
  assert.equal(say(0), "Network error, try again");
  assert.equal(say(500), "Failed (HTTP 500)");
  assert.equal(describeUpload({ status: 415, body: null }).state, "failed");
});

Deno.test("lockedMessage() says when to retry, in minutes", () => {
  assert.equal(lockedMessage(900), "Too many attempts, try again in 15 minutes");
  assert.equal(lockedMessage(30), "Too many attempts, try again in 1 minute");
  assert.equal(lockedMessage(61), "Too many attempts, try again in 2 minutes");
});
