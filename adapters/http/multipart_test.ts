import assert from "node:assert/strict";
import {
  indexOfBytes,
  multipartBoundary,
  MultipartError,
  MultipartParser,
  parseMultipart,
} from "./multipart.ts";

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

Deno.test("MultipartParser reads a body split at every awkward place as the whole body", async () => {
  const bytes = new Uint8Array(20_000).map((_, i) => (i * 7919) % 251);
  // Near-misses of the delimiter inside the file, one right at its end.
  bytes.set(new TextEncoder().encode("\r\n--"), 5000);
  bytes.set(new TextEncoder().encode("\r\n-"), bytes.length - 3);
  const form = new FormData();
  form.append("tags", "cat");
  form.append("file", new File([bytes], "a.png", { type: "image/png" }));
  const { body, boundary } = await encode(form);
  const whole = parseMultipart(body, boundary);
  // Cut points: every byte around each delimiter and header end, plus chunks of a few sizes.
  const marks = [...body.keys()].filter((i) =>
    body[i] === 0x0d && (body[i + 2] === 0x2d || body[i + 2] === 0x0d)
  );
  const schedules = [
    ...marks.flatMap((m) => Array.from({ length: boundary.length + 8 }, (_, k) => [m - 2 + k])),
    Array.from({ length: 400 }, (_, i) => i * 1 + 1),
    Array.from({ length: Math.ceil(body.length / 7) }, (_, i) => (i + 1) * 7),
    Array.from({ length: Math.ceil(body.length / 4096) }, (_, i) => (i + 1) * 4096),
  ];
  for (const cuts of schedules) {
    const seen: Uint8Array[][] = [];
    const parser = new MultipartParser(boundary, (data, part) => {
      (seen[part] ??= []).push(data.slice());
    });
    const fileStart = indexOfBytes(body, new TextEncoder().encode("\r\n\r\n"), 200) + 4;
    const fileEnd = fileStart + bytes.length;
    assert.deepEqual(body.subarray(fileStart, fileEnd), bytes);
    const delimiterLine = boundary.length + 4; // "\r\n--" + boundary
    for (const cut of [...cuts, body.length]) {
      if (!(cut > 0 && cut <= body.length)) continue;
      parser.advance(body, cut);
      // Incremental: every file byte that cannot be the start of the delimiter is handed on
      // before the rest of the body arrives.
      const handed = (seen[1] ?? []).reduce((n, d) => n + d.length, 0);
      const due = Math.min(fileEnd, cut - delimiterLine + 1) - fileStart;
      assert.ok(handed >= due, `cut at ${cut}: ${handed} of ${due} file bytes handed on`);
    }
    const parts = parser.finish(body);
    assert.deepEqual(parts, whole, `cuts at ${cuts.slice(0, 3)}...`);
    // What onData handed on, joined, is each part's bytes.
    parts.forEach((p, i) => {
      const joined = new Uint8Array((seen[i] ?? []).reduce((n, d) => n + d.length, 0));
      let at = 0;
      for (const d of seen[i] ?? []) joined.set(d, (at += d.length) - d.length);
      assert.deepEqual(joined, p.data, `part ${i}, cuts at ${cuts.slice(0, 3)}...`);
    });
  }
});

Deno.test("MultipartParser refuses a body that ends before its closing delimiter", () => {
  const body = new TextEncoder().encode(
    '--b\r\nContent-Disposition: form-data; name="a"\r\n\r\nxy\r\n--b--',
  );
  for (let cut = 0; cut < body.length - 1; cut++) {
    const parser = new MultipartParser("b");
    parser.advance(body, cut);
    assert.throws(() => parser.finish(body.subarray(0, cut)), MultipartError, `cut at ${cut}`);
  }
});
