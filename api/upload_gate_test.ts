import assert from "node:assert/strict";
import { HttpError } from "./errors.ts";
import { UploadGate } from "./upload_gate.ts";

Deno.test("UploadGate admits max uploads at once, refuses the next with 503 and Retry-After", () => {
  const gate = new UploadGate(2);
  const first = gate.enter();
  const second = gate.enter();
  assert.throws(() => gate.enter(), (err: unknown) => {
    assert.ok(err instanceof HttpError);
    assert.equal(err.status, 503);
    assert.equal(new Headers(err.options.headers).get("Retry-After"), "2");
    return true;
  });
  first[Symbol.dispose]();
  first[Symbol.dispose](); // a second release frees nothing more
  using _third = gate.enter();
  assert.throws(() => gate.enter(), HttpError);
  second[Symbol.dispose]();
  using _fourth = gate.enter();
});
