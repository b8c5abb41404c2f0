import assert from "node:assert/strict";
import { dctHash, gradientHash, hammingDistance } from "./phash.ts";
import { blockOf, blockProbes, valuesWithin } from "./similar_probes.ts";

function randomHash(): bigint {
  const [hi, lo] = crypto.getRandomValues(new Uint32Array(2));
  return BigInt.asIntN(64, (BigInt(hi) << 32n) | BigInt(lo));
}

/** `hash` with `bits` distinct random bits flipped. */
function flip(hash: bigint, bits: number): bigint {
  const positions = new Set<number>();
  while (positions.size < bits) positions.add(Math.floor(Math.random() * 64));
  let out = hash;
  for (const p of positions) out ^= 1n << BigInt(p);
  return BigInt.asIntN(64, out);
}

Deno.test("hammingDistance() counts differing bits of signed 64-bit hashes", () => {
  assert.equal(hammingDistance(0n, 0n), 0);
  assert.equal(hammingDistance(0n, -1n), 64);
  assert.equal(hammingDistance(-1n, BigInt.asIntN(64, 0x7fffffffffffffffn)), 1);
  const h = randomHash();
  for (const bits of [1, 7, 16, 40]) assert.equal(hammingDistance(h, flip(h, bits)), bits);
});

Deno.test("valuesWithin() lists each 16-bit value within the radius exactly once", () => {
  for (const [radius, count] of [[0, 1], [1, 17], [2, 137], [3, 697], [4, 2517]]) {
    const values = valuesWithin(0xbeef, radius);
    assert.equal(values.length, count);
    assert.equal(new Set(values).size, count);
    for (const v of values) {
      assert.ok(v >= 0 && v < 65536);
      assert.ok(hammingDistance(BigInt(v), 0xbeefn) <= radius);
    }
  }
});

Deno.test("blockProbes() reach every hash within the distance through some block", () => {
  for (let trial = 0; trial < 2000; trial++) {
    const distance = trial % 17;
    const query = randomHash();
    const other = flip(query, Math.floor(Math.random() * (distance + 1)));
    const probes = blockProbes(query, distance);
    assert.ok(
      probes.some((values, i) => values.includes(blockOf(other, i))),
      `distance ${hammingDistance(query, other)} <= ${distance} missed`,
    );
  }
  assert.throws(() => blockProbes(0n, 17), RangeError);
  assert.throws(() => blockProbes(0n, -1), RangeError);
});

Deno.test("dctHash() ignores brightness and gradientHash() reads left-right gradients", () => {
  const grey = new Uint8Array(32 * 32).map((_, i) => (i * 37) % 251);
  const brighter = grey.map((v) => Math.min(255, v + 3));
  assert.ok(hammingDistance(dctHash(grey), dctHash(brighter)) <= 2);
  const rising = new Uint8Array(72).map((_, i) => i % 9 * 20);
  assert.equal(gradientHash(rising), 0n, "no pixel is brighter than its right neighbour");
  assert.equal(gradientHash(rising.map((v) => 255 - v)), -1n);
});
