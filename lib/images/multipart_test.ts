import assert from "node:assert/strict";
import { indexOfBytes, multipartBoundary, MultipartError, parseMultipart } from "./multipart.ts";

async function encode(form: FormData) {
  const req = new Request("http://x/", { method: "POST", body: form });
  const boundary = multipartBoundary(req.headers.get("content-type"));
  return { body: new Uint8Array(await req.arrayBuffer()), boundary: boundary! };
}

Deno.test("parseMultipart() reads what the platform's FormData encodes, file bytes intact", async () => {
  const bytes = new Uint8Array(100_000).map((_, i) => (i * 7919) % 251);
  bytes.set(new TextEncoder().encode("\r\n--"), 5000); // boundary-like bytes inside the file
  const form = new FormData();
  form.append("tags", "cat, dog");
  form.append("file", new File([bytes], "pic 1.png", { type: "image/png" }));
  form.append("tags", "über");
  const { body, boundary } = await encode(form);
  const parts = parseMultipart(body, boundary);
  assert.deepEqual(parts.map((p) => [p.name, p.filename]), [
    ["tags", null],
    ["file", "pic 1.png"],
    ["tags", null],
  ]);
  assert.deepEqual(parts[1].data, bytes);
  assert.equal(parts[1].contentType, "image/png");
  assert.equal(new TextDecoder().decode(parts[2].data), "über");
});

Deno.test("multipartBoundary() reads plain and quoted boundaries and refuses other types", () => {
  assert.equal(multipartBoundary("multipart/form-data; boundary=abc"), "abc");
  assert.equal(multipartBoundary('multipart/form-data; charset=utf-8; boundary="a b"'), "a b");
  assert.equal(multipartBoundary("multipart/form-data"), null);
  assert.equal(multipartBoundary("application/json"), null);
  assert.equal(multipartBoundary(null), null);
});

Deno.test("parseMultipart() refuses malformed bodies", () => {
  const te = (s: string) => new TextEncoder().encode(s);
  for (
    const bad of [
      "no boundary at all",
      '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nunterminated',
      "--b\r\nContent-Disposition: form-data\r\n\r\nx\r\n--b--",
      "--bX",
    ]
  ) {
    assert.throws(() => parseMultipart(te(bad), "b"), MultipartError, bad);
  }
  assert.deepEqual(parseMultipart(te("--b--\r\n"), "b"), []);
});

Deno.test("indexOfBytes() finds a pattern, including overlaps and at the very end", () => {
  const te = (s: string) => new TextEncoder().encode(s);
  assert.equal(indexOfBytes(te("aaab"), te("aab")), 1);
  assert.equal(indexOfBytes(te("xx\r\n--b"), te("\r\n--b")), 2);
  assert.equal(indexOfBytes(te("\r\n--"), te("\r\n--b")), -1);
  assert.equal(indexOfBytes(te("abcabc"), te("abc"), 1), 3);
  assert.equal(indexOfBytes(te(""), te("a")), -1);
});

Deno.test("indexOfBytes() agrees with a naive search for boundary-length needles", () => {
  const naive = (hay: Uint8Array, needle: Uint8Array, from: number) => {
    outer: for (let i = from; i + needle.length <= hay.length; i++) {
      for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
      return i;
    }
    return -1;
  };
  // A three-letter alphabet makes near-misses and overlapping matches common.
  let seed = 7;
  const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2 ** 31) % n;
  const word = (n: number) => Uint8Array.from({ length: n }, () => 0x61 + rand(3));
  for (let round = 0; round < 300; round++) {
    const needle = word(16 + rand(60));
    const hay = word(rand(2000));
    // Plant the needle (or most of it) somewhere, sometimes overlapping itself.
    for (let k = rand(3); k > 0 && hay.length > needle.length; k--) {
      hay.set(needle.subarray(0, needle.length - rand(2)), rand(hay.length - needle.length));
    }
    const from = rand(50);
    assert.equal(indexOfBytes(hay, needle, from), naive(hay, needle, from), `round ${round}`);
  }
});
