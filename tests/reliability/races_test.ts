/**
 * Races on one image: concurrent tag edits and several deletes of the same image (one delete
 * wins, the others and any late edit get 404, the stored counts stay exact), and uploads of the
 * same content racing its delete (no 5xx; rows and objects agree at the end).
 */
import assert from "node:assert/strict";
import { sha256Hex } from "../../domain/hash.ts";
import { originalKey } from "../../domain/storage_keys.ts";
import { ThumbnailPool } from "../../adapters/thumbnails/pool.ts";
import { startService } from "../_harness/app.ts";
import { authHeader, makeImage, randomTag, upload } from "../_harness/images.ts";
import { assertBucketMatchesTables, tagCountDrift } from "../_harness/consistency.ts";
import { within } from "../_harness/waits.ts";

const pool = await ThumbnailPool.start({ size: 1, maxPixels: 50_000_000, timeoutMs: 10_000 });
const svc = await startService({ thumbnails: pool });
Deno.test.afterAll(() => svc.close());
const auth = await authHeader(svc.app);
const json = { ...auth, "content-type": "application/json" };
addEventListener("unload", () => pool.close());

function req(path: string, init?: RequestInit): Promise<Response> {
  return within(Promise.resolve(svc.app.request(path, init)), 20_000, `${init?.method} ${path}`);
}

async function newImage(tags: string[], bytes?: Uint8Array) {
  const res = await upload(svc.app, auth, bytes ?? await makeImage("png", 48, 48), tags);
  assert.equal(res.status, 201);
  return await res.json();
}

Deno.test("concurrent tag edits and deletes of the same image: one 204, the rest 404, counts exact", async () => {
  const shared = Array.from({ length: 5 }, () => randomTag("hot"));
  // A bystander keeps the shared tags alive, so their counts are checked after the deletes too.
  const bystander = await newImage(shared);
  for (let round = 0; round < 4; round++) {
    const img = await newImage([shared[round % 5], shared[(round + 1) % 5]]);
    const ops: { kind: "patch" | "delete"; res: Promise<Response> }[] = [];
    for (let i = 0; i < 24; i++) {
      const body = i % 3 === 0
        ? { tags: [shared[i % 5], shared[(i + 2) % 5], randomTag("own")] }
        : { add: [shared[(i + 1) % 5], shared[(i + 3) % 5]], remove: [shared[i % 5]] };
      ops.push({
        kind: "patch",
        res: req(`/api/v1/images/${img.short_id}/tags`, {
          method: "PATCH",
          headers: json,
          body: JSON.stringify(body),
        }),
      });
      if (i % 6 === 3) {
        ops.push({
          kind: "delete",
          res: req(`/api/v1/images/${img.short_id}`, { method: "DELETE", headers: auth }),
        });
      }
    }
    const answers = await Promise.all(ops.map(async (o) => {
      const res = await o.res;
      return { kind: o.kind, status: res.status, body: await res.text() };
    }));
    const deletes = answers.filter((a) => a.kind === "delete").map((a) => a.status);
    assert.deepEqual(deletes.sort(), [204, 404, 404, 404], `round ${round}: deletes ${deletes}`);
    for (const a of answers.filter((a) => a.kind === "delete" && a.status === 404)) {
      assert.deepEqual(JSON.parse(a.body), { detail: "Image not found" });
    }
    for (const a of answers.filter((a) => a.kind === "patch")) {
      assert.ok(a.status === 200 || a.status === 404, `patch ${a.status} ${a.body}`);
    }
    assert.equal((await req(`/api/v1/images/${img.short_id}`)).status, 404);
    assert.equal(await svc.s3.store.head(originalKey(img.short_id)), null, "object removed");
    const [links] = await svc.db.sql`select count(*)::int as n from image_tags it
      join images i on i.id = it.image_id where i.short_id = ${img.short_id}`;
    assert.equal(links.n, 0);
    assert.deepEqual(await tagCountDrift(svc), [], `round ${round}`);
  }
  const tags = await (await req(`/api/v1/images/${bystander.short_id}`)).json();
  for (const t of tags.tags) assert.equal(t.image_count, 1, t.name);
  await assertBucketMatchesTables(svc);
});

Deno.test("uploads of the same content racing its delete: no 5xx, and rows and objects agree", async () => {
  // Rounds that ended with a row, whose file is then checked: at least one, so that check ran
  // (four rounds, more while none did).
  let survived = 0;
  for (let round = 0; round < 4 || (survived === 0 && round < 12); round++) {
    const bytes = await makeImage("png", 64, 40);
    const hash = sha256Hex(bytes);
    const first = await newImage([randomTag("r")], bytes);
    const answers: { what: string; status: number; body: string }[] = [];
    let current = first.short_id as string;
    // Several waves: delete what is there while the same bytes are uploaded again.
    for (let wave = 0; wave < 3; wave++) {
      const ops = [
        req(`/api/v1/images/${current}`, { method: "DELETE", headers: auth }).then((r) => ({
          what: "delete",
          r,
        })),
        ...Array.from(
          { length: 5 },
          (_, i) =>
            within(upload(svc.app, auth, bytes, [`wave${wave}_${i}`]), 20_000, "upload").then((
              r,
            ) => ({ what: "upload", r })),
        ),
      ];
      for (const { what, r } of await Promise.all(ops)) {
        answers.push({ what, status: r.status, body: await r.text() });
      }
      const [row] = await svc.db.sql`select short_id from images where hash = ${hash}`;
      current = row?.short_id ?? current;
    }
    for (const a of answers) {
      assert.ok(a.status < 500, `${a.what} ${a.status} ${a.body}`);
      if (a.what === "delete") assert.ok([204, 404].includes(a.status), `delete ${a.status}`);
      else assert.ok([200, 201].includes(a.status), `upload ${a.status} ${a.body}`);
    }
    const rows = await svc.db.sql`select short_id from images where hash = ${hash}`;
    assert.ok(rows.length <= 1, "one row per content hash");
    if (rows.length === 1) {
      survived++;
      const file = await req(`/api/v1/images/${rows[0].short_id}/file`);
      assert.equal(file.status, 200, "the surviving row's file is served");
      await file.body?.cancel();
    }
    assert.deepEqual(await tagCountDrift(svc), []);
  }
  assert.ok(survived > 0, "no round ended with a row: the surviving file was never checked");
  await assertBucketMatchesTables(svc);
  const [pending] = await svc.db.sql`select count(*)::int as n from pending_deletes`;
  assert.equal(pending.n, 0, "nothing left for the sweeper");
});
