/**
 * Captions for a search being typed (db/caption_suggest.ts, the chat command's autocomplete):
 * every finished word exactly, the last as a beginning, each caption once, the most sent first,
 * then the newest; read from the rarer side, within a bound of images.
 */
import assert from "node:assert/strict";
import { suggestCaptions } from "../db/caption_suggest.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, uploadCaptioned } from "./_harness/images.ts";

const svc = await startService();
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);

const seed = (text: string) => uploadCaptioned(svc.app, auth, text, { width: 8, height: 8 });
const suggest = (finished: string[], typed: string, examine?: number) =>
  suggestCaptions(svc.db.sql, { finished, typed, limit: 25, examine });

// Words of their own, so that no other file's captions match. Oldest first.
await seed("quokka snacks at noon");
await seed("everything snacks, quokka snacks");
await seed("snacks without the animal");
const sent = await seed("quokka snails");
await seed("quokka snacks at noon");
await seed("quokkas snacking");
await svc.db.sql`update images set send_count = 2 where short_id = ${sent.short_id}`;

Deno.test("each finished word exactly, the last as a beginning; most sent, then newest", async () => {
  assert.deepEqual(await suggest(["quokka"], "sna"), [
    "quokka snails",
    "quokka snacks at noon",
    "everything snacks, quokka snacks",
  ]);
  // Without finished words, any caption with a word that begins so.
  assert.deepEqual(await suggest([], "snacki"), ["quokkas snacking"]);
  // A finished word the dictionary lacks matches nothing.
  assert.deepEqual(await suggest(["quokka", "wallaby"], "sna"), []);
  assert.deepEqual(await suggest(["quokka"], "xylo"), []);
});

Deno.test("the rarer side is read: a rare finished word past the common beginning's newest", async () => {
  // Eight newer images carry "blorp"; one older one also carries the rare "zanzibarine". The same
  // word: an equal share per completion cannot reach it either.
  const rare = "zanzibarine blorp";
  await seed(rare);
  for (let i = 0; i < 8; i++) await seed(`blorp number ${i}`);
  // Reading two images of the beginning's eight would miss it; the rare word's one finds it.
  assert.deepEqual(await suggest(["zanzibarine"], "blorp", 2), [rare]);
  // The other way round: a common finished word and a rare beginning.
  for (let i = 0; i < 8; i++) await seed(`plinth tale ${i}`);
  await seed("plinth glimmerwort");
  for (let i = 0; i < 8; i++) await seed(`plinth saga ${i}`);
  assert.deepEqual(await suggest(["plinth"], "glimmer", 2), ["plinth glimmerwort"]);
});

Deno.test("at most the bound of images is read, the newest", async () => {
  await seed("frobnicate one");
  await seed("frobnicate two");
  await seed("frobnicate three");
  assert.deepEqual(await suggest([], "frobn", 2), ["frobnicate three", "frobnicate two"]);
  assert.equal((await suggest([], "frobn")).length, 3);
});

Deno.test("each completion of the beginning gets its share of the bound", async () => {
  await seed("wugmo the elder");
  for (let i = 0; i < 3; i++) await seed(`wuggaboo ${i}`);
  // Two completions, a bound of two: the newest of each, not the two newest of the commoner.
  assert.deepEqual(await suggest([], "wug", 2), ["wuggaboo 2", "wugmo the elder"]);
});

Deno.test("a beginning is completed by any letter, and its own characters are literal", async () => {
  // "é" and "ß" sort after every ASCII letter, byte by byte.
  await seed("cafézoid time");
  await seed("straßenwurm here");
  await seed("per_cent%word too");
  assert.deepEqual(await suggest([], "cafézo"), ["cafézoid time"]);
  assert.deepEqual(await suggest([], "caf"), ["cafézoid time"]);
  assert.deepEqual(await suggest([], "straß"), ["straßenwurm here"]);
  // `%` and `_` are not patterns: no word starts with "per%".
  assert.deepEqual(await suggest([], "per%"), []);
  assert.deepEqual(await suggest([], "pe_"), []);
});

Deno.test("a beginning's most used words complete it, walked by use or sorted from the range", async () => {
  // Nine words begin "vrmx": eight on two captions each, and "vrmxb" on one, uploaded last. Only
  // the eight most used (MAX_COMPLETIONS) complete "vrmx", so the newest caption is left out.
  const captions: string[] = [];
  for (const word of ["vrmxa", "vrmxc", "vrmxd", "vrmxe", "vrmxf", "vrmxg", "vrmxh", "vrmxi"]) {
    for (const n of ["one", "two"]) {
      captions.push(`${word} ${n}`);
      await seed(`${word} ${n}`);
    }
  }
  await seed("vrmxb alone");
  const newestFirst = captions.toReversed().slice(0, 25);
  const vrmx = (sortedWords?: number, walkedWords?: number) =>
    suggestCaptions(svc.db.sql, {
      finished: [],
      typed: "vrmx",
      limit: 25,
      sortedWords,
      walkedWords,
    });
  // Nine words are few: the range, sorted.
  assert.deepEqual(await vrmx(), newestFirst);
  // From two words on, many: the words walked most used first.
  assert.deepEqual(await vrmx(2), newestFirst);
  // A walk of one word (the most used of this file, which does not begin so) finds none: the range
  // after all.
  assert.deepEqual(await vrmx(2, 1), newestFirst);
});
