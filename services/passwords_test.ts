import assert from "node:assert/strict";
import { AppError } from "../domain/errors.ts";
import { newHashSlots, OWASP_SCRYPT, scryptHasher } from "./passwords.ts";

const cheap = { N: 2 ** 10, r: 8, p: 1 };

Deno.test("scryptHasher() stores scrypt$N$r$p$salt$hash and verifies only the right password", async () => {
  const hasher = scryptHasher(cheap);
  const stored = await hasher.hash("correct horse");
  assert.match(stored, /^scrypt\$1024\$8\$1\$[A-Za-z0-9+/]{22}==\$[A-Za-z0-9+/]{43}=$/);
  assert.notEqual(await hasher.hash("correct horse"), stored, "a fresh salt each time");
  assert.equal(await hasher.verify("correct horse", stored), true);
  assert.equal(await hasher.verify("correct horsE", stored), false);
  // A hash made at other parameters still verifies: they travel in the string.
  assert.equal(
    await scryptHasher({ N: 2 ** 11, r: 8, p: 1 }).verify("correct horse", stored),
    true,
  );
});

Deno.test("scryptHasher() refuses malformed or outrageous stored strings without hashing", async () => {
  const hasher = scryptHasher(cheap);
  for (
    const bad of [
      "",
      "plain",
      "scrypt$1024$8$1$@@$@@",
      `scrypt$${2 ** 30}$8$1$AAAA$AAAA`,
      "scrypt$1000$8$1$AAAA$AAAA",
    ]
  ) {
    assert.equal(await hasher.verify("x", bad), false, bad);
  }
});

Deno.test("OWASP_SCRYPT is N=2^17, r=8, p=1", () => {
  assert.deepEqual(OWASP_SCRYPT, { N: 131072, r: 8, p: 1 });
});

Deno.test("a hash that waits past the slot wait is refused with sign_in_busy (503)", async () => {
  const hasher = scryptHasher({ N: 2 ** 14, r: 8, p: 1 }, newHashSlots(1, 1));
  const results = await Promise.allSettled([hasher.hash("a"), hasher.hash("b"), hasher.hash("c")]);
  assert.equal(results[0].status, "fulfilled");
  const refused = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
  assert.ok(refused.length >= 1);
  for (const r of refused) {
    assert.ok(r.reason instanceof AppError);
    assert.equal(r.reason.code, "sign_in_busy");
    assert.equal(r.reason.status, 503);
  }
});
