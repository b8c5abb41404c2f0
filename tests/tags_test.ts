/**
 * The tag rules of issue 20 through the API, on PostgreSQL with the job queue running: aliases,
 * implications (applied in the background by a job), exclusion in filters, autocomplete, rename
 * and merge, and their races with uploads and tag edits (counts exact afterwards).
 */
import assert from "node:assert/strict";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, randomTag, upload } from "./_harness/images.ts";
import { sweepPendingDeletes } from "../services/deleter.ts";
import type { JobQueue } from "../adapters/jobs/mod.ts";
import { scheduleImplications } from "../services/tags/implications.ts";
import { tagCountDrift } from "./_harness/consistency.ts";
import { until } from "./_harness/waits.ts";
import { setImageCaption } from "../db/captions.ts";

const svc = await startService({ jobs: true });
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);
const json = { ...auth, "content-type": "application/json" };
const names = (img: { tags: { name: string }[] }) => img.tags.map((t) => t.name).sort();

async function newImage(tags: string[] = []): Promise<{ short_id: string; tags: [] }> {
  const res = await upload(svc.app, auth, await makeImage("png", 8, 8), tags);
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return await res.json();
}

function call(method: string, path: string, body?: unknown, headers = json) {
  return Promise.resolve(svc.app.request(`/api/v1${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  }));
}

async function ok<T = unknown>(res: Response | Promise<Response>, status = 200): Promise<T> {
  const r = await res;
  const text = await r.text();
  assert.equal(r.status, status, text);
  return text ? JSON.parse(text) : undefined as T;
}

async function refused(res: Promise<Response>, status: number, code: string) {
  const r = await res;
  const body = await r.json();
  assert.equal(r.status, status, JSON.stringify(body));
  assert.equal(body.code, code, JSON.stringify(body));
  assert.equal(typeof body.detail, "string");
}

const ids = async (query: string) =>
  (await ok<{ items: { short_id: string }[] }>(call("GET", `/images?${query}`))).items
    .map((i) => i.short_id);
const tagsOf = async (id: string) => names(await ok(call("GET", `/images/${id}`)));
const countOf = async (name: string) => {
  const [row] = await svc.db.sql`select image_count from tags where name = ${name}`;
  return row ? row.image_count as number : null;
};
const noDrift = async () => assert.deepEqual(await tagCountDrift(svc), []);

Deno.test("an alias takes over a tag's links and then means its target everywhere", async () => {
  const [lol, laughing, other] = [randomTag("lol"), randomTag("laughing"), randomTag("o")];
  const a = await newImage([lol]);
  const b = await newImage([lol, laughing]);
  const c = await newImage([laughing, other]);
  assert.equal(await countOf(laughing), 2);

  const made = await ok(call("PUT", `/tag-aliases/${lol}`, { target: laughing }), 201);
  assert.deepEqual(made, { alias: lol, target: laughing });
  assert.equal(await countOf(lol), null, "the alias's tag is gone");
  assert.equal(await countOf(laughing), 3, "links moved, the shared one counted once");
  assert.deepEqual(await tagsOf(a.short_id), [laughing]);
  assert.deepEqual(await tagsOf(b.short_id), [laughing]);
  await noDrift();

  // Uploads, edits, filters, the tag search and the library page resolve it.
  const d = await newImage([lol.toUpperCase()]);
  assert.deepEqual(await tagsOf(d.short_id), [laughing]);
  await ok(call("PATCH", `/images/${c.short_id}/tags`, { add: [lol], remove: [other] }));
  assert.deepEqual(await tagsOf(c.short_id), [laughing]);
  await ok(call("PATCH", `/images/${c.short_id}/tags`, { remove: [lol] }));
  assert.deepEqual(await tagsOf(c.short_id), []);
  assert.deepEqual(await ids(`tags=${lol}`), [d.short_id, b.short_id, a.short_id]);
  assert.deepEqual(await ids(`tags=${lol},${laughing}`), await ids(`tags=${laughing}`));
  const found = await ok<unknown[]>(call("GET", `/tags?q=${lol.slice(0, 6)}`));
  assert.deepEqual(found, [{ name: laughing, image_count: 3 }], "the tag search finds aliases");
  const hits = await ok<unknown[]>(call("GET", `/tags/suggest?q=${lol}`));
  assert.deepEqual(hits, [{ name: laughing, image_count: 3, alias: lol }]);
  const page = await svc.app.request(`/?tags=${lol}`);
  assert.equal(page.status, 200);
  assert.ok((await page.text()).includes(`/i/${d.short_id}`));
  assert.equal(await countOf(lol), null, "no write created the alias's name as a tag");

  // Listed; putting it again is 200; removing it frees the name.
  const list = await ok<{ alias: string; target: string }[]>(
    call("GET", "/tag-aliases?limit=1000"),
  );
  assert.ok(list.some((x) => x.alias === lol && x.target === laughing));
  await ok(call("PUT", `/tag-aliases/${lol}`, { target: laughing }), 200);
  await ok(call("DELETE", `/tag-aliases/${lol}`), 204);
  await refused(call("DELETE", `/tag-aliases/${lol}`), 404, "alias_not_found");
  const e = await newImage([lol]);
  assert.deepEqual(await tagsOf(e.short_id), [lol], "a plain tag again");
  assert.equal(await countOf(laughing), 3);
  await noDrift();
});

Deno.test("aliases refuse chains, themselves, bad names and anonymous callers", async () => {
  const [x, y, z] = [randomTag("x"), randomTag("y"), randomTag("z")];
  await ok(call("PUT", `/tag-aliases/${x}`, { target: y }), 201);
  await refused(call("PUT", `/tag-aliases/${z}`, { target: x }), 422, "alias_chain");
  await refused(call("PUT", `/tag-aliases/${y}`, { target: z }), 422, "alias_chain");
  await refused(call("PUT", `/tag-aliases/${z}`, { target: z.toUpperCase() }), 422, "alias_self");
  await refused(call("PUT", `/tag-aliases/${z}`, { target: "a,b" }), 422, "invalid_tag_name");
  await refused(call("PUT", `/tag-aliases/-${z}`, { target: y }), 422, "invalid_tag_name");
  const anon = await call("PUT", `/tag-aliases/${z}`, { target: y }, {
    "content-type": "application/json",
  });
  assert.equal(anon.status, 401);
  await anon.body?.cancel();
  const [{ n }] = await svc.db.sql`select count(*)::int as n from tag_aliases where alias = ${z}`;
  assert.equal(n, 0);
});

Deno.test("implications are added with the tag, transitively, and never removed with it", async () => {
  const [face, sad, mood] = [randomTag("face"), randomTag("sad"), randomTag("mood")];
  await ok(call("PUT", `/tag-implications/${sad}`, { implies: [mood] }), 201);
  const set = await ok(call("PUT", `/tag-implications/${face}`, { implies: [sad] }), 201);
  assert.deepEqual(set, { tag: face, implies: [sad] });
  const img = await newImage([face]);
  assert.deepEqual(names(img), [face, mood, sad].sort());
  const other = await newImage([]);
  await ok(call("PATCH", `/images/${other.short_id}/tags`, { tags: [face] }));
  assert.deepEqual(await tagsOf(other.short_id), [face, mood, sad].sort());
  await ok(call("PATCH", `/images/${img.short_id}/tags`, { remove: [face] }));
  assert.deepEqual(await tagsOf(img.short_id), [mood, sad].sort());
  const list = await ok<{ tag: string; implies: string[] }[]>(
    call("GET", "/tag-implications?limit=1000"),
  );
  assert.deepEqual(list.find((x) => x.tag === face), { tag: face, implies: [sad] });
  await ok(call("DELETE", `/tag-implications/${face}`), 204);
  await refused(call("DELETE", `/tag-implications/${face}`), 404, "implication_not_found");
  assert.deepEqual(names(await newImage([face])), [face]);
  await noDrift();
});

Deno.test("implication cycles are refused, directly or through others", async () => {
  const [a, b, c] = [randomTag("a"), randomTag("b"), randomTag("c")];
  await refused(call("PUT", `/tag-implications/${a}`, { implies: [a] }), 422, "implication_cycle");
  await ok(call("PUT", `/tag-implications/${a}`, { implies: [b] }), 201);
  await ok(call("PUT", `/tag-implications/${b}`, { implies: [c] }), 201);
  await refused(call("PUT", `/tag-implications/${c}`, { implies: [a] }), 422, "implication_cycle");
  await refused(call("PUT", `/tag-implications/${b}`, { implies: [a] }), 422, "implication_cycle");
  const [{ n }] = await svc.db.sql`
    select count(*)::int as n from tag_implications ti join tags t on t.id = ti.tag_id
    where t.name in (${a}, ${b}, ${c})`;
  assert.equal(n, 2, "nothing of the refused changes was kept");
  // A merge that would close a cycle is refused too, and changes nothing.
  await refused(call("PATCH", `/tags/${c}`, { name: a }), 422, "implication_cycle");
  assert.notEqual(await countOf(c), null);
});

Deno.test("setting an implication applies it to the tag's images in the background", async () => {
  const [t, implied] = [randomTag("t"), randomTag("implied")];
  const images = [];
  for (let i = 0; i < 3; i++) images.push(await newImage([t]));
  await seedLinks(t, 1200); // more than two batches
  await ok(call("PUT", `/tag-implications/${t}`, { implies: [implied] }), 201);
  await until("the implication reached every image", async () => await countOf(implied) === 1203);
  for (const img of images) assert.deepEqual(await tagsOf(img.short_id), [implied, t].sort());
  await noDrift();
});

Deno.test("exclusion: happy,-sarcastic; exclusions alone; several; the 50 cap counts both", async () => {
  const [happy, sarcastic, loud] = [randomTag("happy"), randomTag("sarc"), randomTag("loud")];
  const a = await newImage([happy]);
  const b = await newImage([happy, sarcastic]);
  const c = await newImage([happy, loud]);
  assert.deepEqual(await ids(`tags=${happy},-${sarcastic}`), [c.short_id, a.short_id]);
  assert.deepEqual(await ids(`tags=${happy}&tags=-${sarcastic},-${loud}`), [a.short_id]);
  const newest = await ids("limit=200");
  const without = await ids(`tags=-${happy}&limit=200`);
  const rest = newest.filter((id) => ![a, b, c].some((x) => x.short_id === id));
  assert.deepEqual(without.slice(0, rest.length), rest);
  assert.deepEqual(await ids(`tags=-no_such_tag_at_all&limit=200`), newest);
  // A tag both required and excluded matches nothing.
  assert.deepEqual(await ids(`tags=${happy},-${happy}`), []);
  assert.deepEqual(await ids(`tags=${happy},-${happy}&q=anything`), []);
  // An alias in an exclusion means its target.
  const alias = randomTag("alias");
  await ok(call("PUT", `/tag-aliases/${alias}`, { target: sarcastic }), 201);
  assert.deepEqual(await ids(`tags=${happy},-${alias}`), [c.short_id, a.short_id]);
  // In a filter of required tags and a caption search too; and an alias of an excluded tag clashes.
  await setImageCaption(svc.db.sql, b.short_id, "ALIASED CAPTION", "manual");
  assert.deepEqual(await ids(`tags=${alias}`), [b.short_id]);
  assert.deepEqual(await ids(`tags=${alias}&q=aliased caption`), [b.short_id]);
  assert.deepEqual(await ids(`tags=${happy},${alias},-${sarcastic}`), []);
  assert.deepEqual(await ids(`tags=${alias},-${sarcastic}&q=aliased`), []);
  const many = Array.from({ length: 25 }, (_, i) => `t${i}`);
  const fifty = [...many, ...many.map((t) => `-x${t}`)].join(",");
  await ok(call("GET", `/images?tags=${fifty}`));
  await refused(call("GET", `/images?tags=${fifty},-one_more`), 422, "too_many_tags");
  await refused(call("GET", `/images?tags=${happy},-`), 422, "invalid_tag_name");
  // The library page reads exclusions too.
  const page = await (await svc.app.request(`/?tags=${happy},-${sarcastic}`)).text();
  assert.ok(page.includes(`/i/${a.short_id}`) && !page.includes(`/i/${b.short_id}`));
});

Deno.test("suggest: prefix matches by count, then substring matches; a leading - is kept", async () => {
  const p = randomTag("sg").replace("_", "");
  await newImage([`${p}_rare`]);
  for (let i = 0; i < 3; i++) await newImage([`${p}_common`, `x${p}_inside`]);
  await newImage([`x${p}_inside`]);
  const got = await ok<{ name: string }[]>(call("GET", `/tags/suggest?q=${p.toUpperCase()}`));
  assert.deepEqual(got, [
    { name: `${p}_common`, image_count: 3 },
    { name: `${p}_rare`, image_count: 1 },
    { name: `x${p}_inside`, image_count: 4 },
  ]);
  const minus = await ok<{ name: string }[]>(call("GET", `/tags/suggest?q=-${p}&limit=1`));
  assert.deepEqual(minus, [{ name: `-${p}_common`, image_count: 3 }]);
  assert.deepEqual(await ok(call("GET", `/tags/suggest?q=-`)), []);
  assert.deepEqual(await ok(call("GET", `/tags/suggest?q=zzz${p}`)), []);
  const bad = await call("GET", `/tags/suggest?q=a&limit=51`);
  assert.equal(bad.status, 422);
  await bad.body?.cancel();
});

Deno.test("rename: a new name renames; an existing one merges with exact counts", async () => {
  const [old, renamed, into, alias, imp] = ["old", "new", "into", "alias", "imp"].map((p) =>
    randomTag(p)
  );
  const a = await newImage([old]);
  const b = await newImage([old, into]);
  await ok(call("PUT", `/tag-aliases/${alias}`, { target: old }), 201);
  await ok(call("PUT", `/tag-implications/${old}`, { implies: [imp] }), 201);
  await until("implied", async () => await countOf(imp) === 2);
  const r = await ok(call("PATCH", `/tags/${old}`, { name: renamed.toUpperCase() }));
  assert.deepEqual(r, { name: renamed, image_count: 2, merged: false });
  assert.equal(await countOf(old), null);
  assert.deepEqual(names(await newImage([alias])), [imp, renamed].sort(), "rules followed");

  const m = await ok(call("PATCH", `/tags/${renamed}`, { name: into }));
  assert.deepEqual(m, { name: into, image_count: 3, merged: true });
  assert.deepEqual(await tagsOf(a.short_id), [imp, into].sort());
  assert.deepEqual(await tagsOf(b.short_id), [imp, into].sort());
  assert.equal(await countOf(renamed), null);
  const aliases = await ok<{ alias: string; target: string }[]>(
    call("GET", "/tag-aliases?limit=1000"),
  );
  assert.ok(aliases.some((x) => x.alias === alias && x.target === into));
  const imps = await ok<{ tag: string; implies: string[] }[]>(
    call("GET", "/tag-implications?limit=1000"),
  );
  assert.deepEqual(imps.find((x) => x.tag === into)?.implies, [imp]);
  await refused(call("PATCH", `/tags/${renamed}`, { name: "x" }), 404, "tag_not_found");
  await refused(call("PATCH", `/tags/${into}`, { name: alias }), 422, "name_is_alias");
  await refused(call("PATCH", `/tags/${into}`, { name: "a/b" }), 422, "invalid_tag_name");
  await noDrift();
});

let seeded = 0;

/** Links `n` new images (inserted directly, fast) to tag `name`, creating it. */
async function seedLinks(name: string, n: number, also: string[] = []) {
  const base = seeded;
  seeded += n;
  await svc.db.sql`insert into tags (name) select unnest(${[name, ...also]}::text[])
                   on conflict do nothing`;
  await svc.db.sql`
    with made as (
      insert into images (short_id, hash, content_type, size_bytes, width, height)
      select 'z' || lpad(to_hex(${base} + g), 7, '0'), md5(random()::text) || md5(random()::text),
             'image/png', 10, 1, 1
      from generate_series(1, ${n}) g returning id, seq)
    insert into image_tags (image_id, tag_id, image_seq)
    select m.id, t.id, m.seq from made m join tags t on t.name = any(${[name, ...also]}::text[])`;
}

Deno.test("merging two large tags keeps counts exact and links de-duplicated", async () => {
  const [big1, big2] = [randomTag("big1"), randomTag("big2")];
  await seedLinks(big1, 6000);
  await seedLinks(big2, 5000);
  await seedLinks(big1, 4000, [big2]); // on both
  assert.deepEqual([await countOf(big1), await countOf(big2)], [10000, 9000]);
  await ok(call("PATCH", `/tags/${big1}`, { name: big2 }));
  assert.equal(await countOf(big2), 15000);
  assert.equal(await countOf(big1), null);
  await noDrift();
});

/** When a request was sent and when its answer came (performance.now()). */
interface Span {
  start: number;
  end: number;
}

/** Times `p`, a request sent now. */
async function timed<T>(p: Promise<T>): Promise<{ value: T; span: Span }> {
  const start = performance.now();
  const value = await p;
  return { value, span: { start, end: performance.now() } };
}

/** How many of `spans` were in flight at some moment of `rule`'s span. */
const overlapping = (spans: Span[], rule: Span) =>
  spans.filter((s) => s.start < rule.end && s.end > rule.start).length;

/** An upload of fresh bytes with `tags`, timed. */
async function timedUpload(tags: string[]) {
  const bytes = await makeImage("png", 8, 8);
  return await timed(newImageOf(bytes, tags));
}

async function newImageOf(bytes: Uint8Array, tags: string[]) {
  const res = await upload(svc.app, auth, bytes, tags);
  assert.ok(res.status === 201 || res.status === 200, await res.clone().text());
  return await res.json() as { short_id: string };
}

/**
 * Runs `round` until the rule change it makes overlapped uploads (up to `rounds` times), asserting
 * its outcome every time; fails when no round overlapped, since then nothing raced.
 */
async function racing(rounds: number, round: () => Promise<number>) {
  const seen: number[] = [];
  while (seen.length < rounds && !seen.some((n) => n > 0)) seen.push(await round());
  assert.ok(seen.some((n) => n > 0), `no upload was in flight during the rule change: ${seen}`);
}

Deno.test("race: an alias created while uploads of its name are in flight leaves no tag of that name", async () => {
  await racing(5, async () => {
    const [alias, target] = [randomTag("ra"), randomTag("rt")];
    const images = await Promise.all(Array.from({ length: 8 }, () => makeImage("png", 8, 8)));
    const uploads = images.map((bytes) => timed(newImageOf(bytes, [alias])));
    const edits = (async () => {
      const img = await newImage([]);
      for (let i = 0; i < 5; i++) {
        await ok(call("PATCH", `/images/${img.short_id}/tags`, { add: [alias] }));
        await ok(call("PATCH", `/images/${img.short_id}/tags`, { tags: [] }));
      }
    })();
    await new Promise((r) => setTimeout(r, 20));
    const rule = await timed(ok(call("PUT", `/tag-aliases/${alias}`, { target }), 201));
    const made = await Promise.all(uploads);
    await edits;
    assert.equal(await countOf(alias), null, "no upload re-created the alias's tag");
    for (const { value } of made) assert.deepEqual(await tagsOf(value.short_id), [target]);
    assert.equal(await countOf(target), 8);
    await noDrift();
    return overlapping(made.map((m) => m.span), rule.span);
  });
});

Deno.test("race: an implication set while uploads add the tag reaches every image of it", async () => {
  await racing(5, async () => {
    const [t, implied] = [randomTag("rt"), randomTag("ri")];
    await seedLinks(t, 3000);
    let set: Span | null = null;
    // Uploads one after another until two have started after the implication was set.
    const adding = (async () => {
      const made = [];
      let after = 0;
      while (after < 2 && made.length < 30) {
        if (set) after++;
        made.push(await timedUpload([t]));
      }
      return made;
    })();
    set = (await timed(ok(call("PUT", `/tag-implications/${t}`, { implies: [implied] }), 201)))
      .span;
    const made = await adding;
    await until(
      "every image of the tag has the implied tag",
      async () => await countOf(implied) === await countOf(t),
    );
    assert.equal(await countOf(t), 3000 + made.length);
    for (const { value } of made) {
      assert.deepEqual(await tagsOf(value.short_id), [implied, t].sort());
    }
    await noDrift();
    return overlapping(made.map((m) => m.span), set);
  });
});

Deno.test("tags an upload implies count towards 50: 422 and nothing stored", async () => {
  const [a, ...implied] = Array.from({ length: 6 }, () => randomTag("cap"));
  await ok(call("PUT", `/tag-implications/${a}`, { implies: implied }), 201);
  const objects = async () => (await Array.fromAsync(svc.s3.store.list("images/"))).length;
  const before = await objects();
  const bytes = await makeImage("png", 9, 9);
  const res = await upload(svc.app, auth, bytes, [
    a,
    ...Array.from({ length: 45 }, (_, i) => `f${i}`),
  ]);
  assert.equal(res.status, 422);
  assert.equal((await res.json()).code, "too_many_tags");
  await svc.db.sql`update pending_deletes set next_attempt_at = now()`;
  await sweepPendingDeletes(svc.db.sql, svc.s3.store);
  assert.equal(await objects(), before, "the stored objects were removed");
  const img = await newImage(Array.from({ length: 45 }, (_, i) => `g${i}`));
  const edit = await call("PATCH", `/images/${img.short_id}/tags`, { add: [a] });
  assert.equal(edit.status, 422, "45 + the tag + the 5 it implies");
  assert.equal((await tagsOf(img.short_id)).length, 45);
  await edit.body?.cancel();
  await noDrift();
});

Deno.test("without a job queue (a tool, a test app) implications are applied in-process", async () => {
  const [t, implied] = [randomTag("np"), randomTag("ni")];
  await seedLinks(t, 700);
  await ok(call("PUT", `/tag-implications/${t}`, { implies: [implied] }), 201);
  await until("the queue applied it", async () => await countOf(implied) === 700);
  await svc.db
    .sql`delete from image_tags where tag_id = (select id from tags where name = ${implied})`;
  const [{ id }] = await svc.db.sql`select id::text from tags where name = ${t}`;
  await scheduleImplications({ sql: svc.db.sql, log: svc.services.log }, id);
  await until("applied in this process", async () => await countOf(implied) === 700);
  await noDrift();
});

Deno.test("when the job cannot be queued, implications are applied in-process", async () => {
  const [t, implied] = [randomTag("nq"), randomTag("nqi")];
  await seedLinks(t, 300);
  await svc.db.sql`insert into tags (name) values (${implied})`;
  await svc.db.sql`insert into tag_implications (tag_id, implied_id)
    select a.id, b.id from tags a, tags b where a.name = ${t} and b.name = ${implied}`;
  const [{ id }] = await svc.db.sql`select id::text from tags where name = ${t}`;
  const failing = { send: () => Promise.reject(new Error("queue down")) } as unknown as JobQueue;
  await scheduleImplications({ sql: svc.db.sql, log: svc.services.log, jobs: failing }, id);
  await until("applied in this process", async () => await countOf(implied) === 300);
});

Deno.test("deleting an image lowers its tags' counts (the per-statement trigger sees cascades)", async () => {
  const [t, u] = [randomTag("del"), randomTag("del")];
  const a = await newImage([t, u]);
  await newImage([t]);
  assert.deepEqual([await countOf(t), await countOf(u)], [2, 1]);
  await ok(call("DELETE", `/images/${a.short_id}`), 204);
  assert.deepEqual([await countOf(t), await countOf(u)], [1, 0]);
  await noDrift();
});

Deno.test("background implications leave off an image they would take past 50 tags, and say so", async () => {
  const [t, ...implied] = [randomTag("cb"), randomTag("cbi"), randomTag("cbi")];
  // 49 tags: the two implied ones would make 51. The other image has room.
  const full = await newImage([t, ...Array.from({ length: 48 }, (_, i) => `full${i}`)]);
  const roomy = await newImage([t]);
  await ok(call("PUT", `/tag-implications/${t}`, { implies: implied }), 201);
  await until("the implication reached the image with room", async () => {
    return (await tagsOf(roomy.short_id)).length === 3;
  });
  assert.deepEqual(await tagsOf(roomy.short_id), [t, ...implied].sort());
  const tags = await tagsOf(full.short_id);
  assert.equal(tags.length, 49);
  assert.deepEqual(tags.filter((n) => implied.includes(n)), []);
  assert.deepEqual([await countOf(implied[0]), await countOf(implied[1])], [1, 1]);
  const [{ id }] = await svc.db.sql`select id::text from tags where name = ${t}`;
  await until("the job warned of the image left off", () => {
    const warned = svc.logs.map((l) => JSON.parse(l)).find((l) =>
      l.msg === "implied tags left off images that would pass 50 tags" && l.tag === id
    );
    return warned !== undefined && warned.skipped === 1 && warned.images === 2;
  });
  await noDrift();
});
