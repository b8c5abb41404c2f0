import assert from "node:assert/strict";
import nacl from "npm:tweetnacl@1.0.3";
import { discordVerifier } from "./chat_signatures.ts";

const hex = (b: Uint8Array) => Array.from(b, (v) => v.toString(16).padStart(2, "0")).join("");

Deno.test("discordVerifier takes any public key: signed by tweetnacl, true; altered, false", () => {
  const now = 1_800_000_000_000;
  const timestamp = String(now / 1000);
  const body = new TextEncoder().encode('{"type":1}');
  let urlUnsafe = 0;
  for (let k = 0; k < 24; k++) {
    const keys = nacl.sign.keyPair.fromSeed(new Uint8Array(32).fill(k * 7 + 1));
    // Keys whose base64 has "+" or "/" are those whose JWK (base64url) spelling differs.
    if (/[+/]/.test(btoa(String.fromCharCode(...keys.publicKey)))) urlUnsafe++;
    const signed = new Uint8Array([...new TextEncoder().encode(timestamp), ...body]);
    const signature = hex(nacl.sign.detached(signed, keys.secretKey));
    const verify = discordVerifier(hex(keys.publicKey));
    assert.equal(verify(signature, timestamp, body, now), true, `key ${k}`);
    const altered = new Uint8Array(body);
    altered[2] ^= 1;
    assert.equal(verify(signature, timestamp, altered, now), false);
    assert.equal(
      verify(signature.replace(/^./, (c) => (c === "0" ? "1" : "0")), timestamp, body, now),
      false,
    );
  }
  assert.ok(urlUnsafe >= 5, `only ${urlUnsafe} keys had "+" or "/" in base64`);
});
