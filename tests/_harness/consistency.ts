/**
 * Consistency checks after a test: the bucket against the tables, and the counts the triggers
 * keep against the links they count.
 */
import assert from "node:assert/strict";
import { sweepPendingDeletes } from "../../services/deleter.ts";
import { originalKey } from "../../domain/storage_keys.ts";
import type { TestService } from "./app.ts";

/**
 * Every object under images/ and thumbnails/ has its row and every row has its objects. Due
 * pending deletes are swept first (a delete's objects may still wait for the sweeper); nothing
 * may be in flight while this runs.
 */
export async function assertBucketMatchesTables(svc: Pick<TestService, "db" | "s3">) {
  // Keys of uploads whose outcome was unknown wait out their guard (an hour) in pending_deletes
  // before the sweeper decides; let that hour pass, then sweep as the service would.
  await svc.db.sql`update pending_deletes set next_attempt_at = now()`;
  await sweepPendingDeletes(svc.db.sql, svc.s3.store);
  const objects = new Set([
    ...await Array.fromAsync(svc.s3.store.list("images/")),
    ...await Array.fromAsync(svc.s3.store.list("thumbnails/")),
  ]);
  const rows = await svc.db.sql<{ short_id: string; thumbnail_key: string | null }[]>`
    select short_id, thumbnail_key from images`;
  const expected = new Set<string>();
  for (const r of rows) {
    expected.add(originalKey(r.short_id));
    if (r.thumbnail_key) expected.add(r.thumbnail_key);
  }
  const missing = [...expected].filter((k) => !objects.has(k));
  const orphans = [...objects].filter((k) => !expected.has(k));
  const pending = (await svc.db.sql<{ key: string }[]>`select key from pending_deletes`)
    .map((r) => r.key);
  assert.deepEqual(missing, [], `rows without their objects (pending: ${pending.join(" ")})`);
  assert.deepEqual(orphans, [], `objects without a row (pending: ${pending.join(" ")})`);
}

/**
 * What the triggers keep that differs from image_tags: tags whose stored image_count is not
 * COUNT(*) over their links, and images whose tag IDs (migration 010) are not their links.
 */
export async function tagCountDrift(svc: TestService) {
  return [
    ...await svc.db.sql`
    select t.name, t.image_count,
      (select count(*)::int from image_tags it where it.tag_id = t.id) as actual
    from tags t where t.image_count <> (select count(*) from image_tags it where it.tag_id = t.id)`,
    ...await svc.db.sql`
    select i.short_id, i.tag_ids::text as stored, l.ids::text as actual
    from images i
    cross join lateral (select array(select tag_id from image_tags where image_id = i.id
                                     order by tag_id) as ids) l
    where array(select unnest(i.tag_ids) order by 1) <> l.ids`,
  ];
}
