import assert from "node:assert/strict";
import { createSql } from "../db/client.ts";
import { loadMigrations, migrate } from "../services/migrate.ts";
import { isShortId } from "../domain/short_id.ts";
import { legacyKeys, originalKey, thumbnailKey } from "../domain/storage_keys.ts";
import { readAll } from "../adapters/storage/mod.ts";
import { freshDatabase } from "./_harness/db.ts";
import { disposeS3, startS3 } from "./_harness/s3.ts";

const s3 = await startS3();
addEventListener("unload", () => void disposeS3(s3));

const allVersions = async () => (await loadMigrations()).map((m) => m.version);

/** Images as they were at revision 002: UUID keys, some with a thumbnail. */
async function seedRevision002(sql: ReturnType<typeof createSql>, count: number) {
  const seeded: { id: string; original: Uint8Array; thumb: Uint8Array | null }[] = [];
  for (let i = 0; i < count; i++) {
    const id = crypto.randomUUID();
    const original = crypto.getRandomValues(new Uint8Array(1000 + i));
    const thumb = i % 3 === 0 ? null : crypto.getRandomValues(new Uint8Array(200 + i));
    await s3.store.put(legacyKeys.original(id), original, {
      contentLength: original.length,
      contentType: "image/png",
    });
    if (thumb) {
      await s3.store.put(legacyKeys.thumbnail(id), thumb, {
        contentLength: thumb.length,
        contentType: "image/webp",
      });
    }
    await sql`insert into images (id, hash, content_type, size_bytes, width, height, thumbnail_key)
      values (${id}, ${"h" + id}, 'image/png', ${original.length}, 10, 10,
              ${thumb ? legacyKeys.thumbnail(id) : null})`;
    seeded.push({ id, original, thumb });
  }
  return seeded;
}

async function assertBackfilled(
  sql: ReturnType<typeof createSql>,
  seeded: Awaited<ReturnType<typeof seedRevision002>>,
) {
  const rows = await sql<{ id: string; short_id: string; thumbnail_key: string | null }[]>`
    select id, short_id, thumbnail_key from images`;
  assert.equal(rows.length, seeded.length);
  assert.equal(new Set(rows.map((r) => r.short_id)).size, rows.length, "short IDs are distinct");
  for (const s of seeded) {
    const row = rows.find((r) => r.id === s.id)!;
    assert.ok(isShortId(row.short_id), row.short_id);
    const original = await s3.store.get(originalKey(row.short_id));
    assert.deepEqual(await readAll(original!.body), s.original);
    if (s.thumb) {
      assert.equal(row.thumbnail_key, thumbnailKey(row.short_id));
      assert.deepEqual(await readAll((await s3.store.get(row.thumbnail_key!))!.body), s.thumb);
    } else {
      assert.equal(row.thumbnail_key, null);
    }
  }
}

Deno.test("migrate() takes an empty database to head and records every revision", async () => {
  const db = await freshDatabase();
  try {
    const applied = await migrate(db.sql, s3.store);
    assert.deepEqual(applied, await allVersions());
    const recorded = await db.sql`select version from schema_migrations order by version`;
    assert.deepEqual(recorded.map((r) => r.version), [...applied].sort());
    assert.deepEqual(await migrate(db.sql, s3.store), [], "a second run applies nothing");
    const cols = await db.sql`select column_name, is_nullable from information_schema.columns
      where table_name = 'images' and column_name in ('short_id', 'thumbnail_key')
      order by column_name`;
    assert.deepEqual(cols.map((c) => [c.column_name, c.is_nullable]), [
      ["short_id", "NO"],
      ["thumbnail_key", "YES"],
    ]);
    const trgm = await db.sql`select 1 from pg_indexes where indexname = 'tags_name_trgm_idx'`;
    assert.equal(trgm.length, 1);
  } finally {
    await db.drop();
  }
});

Deno.test("migrate() from revision 002 backfills short IDs and copies objects to new keys", async () => {
  const db = await freshDatabase();
  try {
    await migrate(db.sql, s3.store, { target: "002_thumbnail_key" });
    const seeded = await seedRevision002(db.sql, 7);
    await migrate(db.sql, s3.store, { backfill: { batchSize: 3 } });
    await assertBackfilled(db.sql, seeded);
    await assert.rejects(
      db.sql`update images set short_id = null`,
      (e: { code?: string }) => e.code === "23502", // not_null_violation
    );
  } finally {
    await db.drop();
  }
});

/** Link rows whose IDs a migration copies onto each image's row, and triggers keep there after. */
interface RowCopy {
  /** The revision before the copy. */
  from: string;
  /** The dictionary (`tags`), its name column and the prefix of the names made here. */
  dictionary: string;
  name: string;
  prefix: string;
  /** The links (`image_tags`), their ID column, and the images' column that copies them. */
  links: string;
  id: string;
  copy: string;
}

/** Five images linked to two of four names each, migrated past `k.from`, then one link more and fewer. */
async function assertCopiedOntoRows(k: RowCopy) {
  const db = await freshDatabase();
  const link = (where: string) =>
    `insert into ${k.links} (image_id, ${k.id}, image_seq)
     select i.id, d.id, i.seq from images i join ${k.dictionary} d on ${where}`;
  try {
    await migrate(db.sql, s3.store, { target: k.from });
    await db.sql.unsafe(`
      insert into images (short_id, hash, content_type, size_bytes, width, height)
        select 'img' || lpad(i::text, 5, '0'), 'h' || i, 'image/png', 10, 1, 1
        from generate_series(1, 5) i;
      insert into ${k.dictionary} (${k.name}) select '${k.prefix}' || i from generate_series(1, 4) i;
      ${link("(i.seq + d.id) % 2 = 0")}`);
    await migrate(db.sql, s3.store);
    const rows = await db.sql.unsafe<{ stored: string[]; links: string[] }[]>(`
      select array(select unnest(i.${k.copy})::text order by 1) as stored,
             array(select ${k.id}::text from ${k.links} where image_id = i.id order by 1) as links
      from images i`);
    assert.equal(rows.length, 5);
    for (const r of rows) assert.deepEqual(r.stored, r.links);
    assert.ok(rows.every((r) => r.links.length === 2));
    // From then on the triggers keep it: one more link, then one fewer.
    await db.sql.unsafe(link(`i.short_id = 'img00001' and d.${k.name} = '${k.prefix}2'`));
    await db.sql.unsafe(`delete from ${k.links}
      where ${k.id} = (select id from ${k.dictionary} where ${k.name} = '${k.prefix}3')`);
    const [one] = await db.sql.unsafe<{ names: string[] }[]>(`
      select array(select ${k.name} from ${k.dictionary} where id = any(i.${k.copy}) order by 1)
        as names
      from images i where short_id = 'img00001'`);
    assert.deepEqual(one.names, [`${k.prefix}1`, `${k.prefix}2`]);
  } finally {
    await db.drop();
  }
}

Deno.test("migrate() from revision 009 copies each image's tag IDs onto its row", async () => {
  await assertCopiedOntoRows({
    from: "009_captions",
    dictionary: "tags",
    name: "name",
    prefix: "tag",
    links: "image_tags",
    id: "tag_id",
    copy: "tag_ids",
  });
});

Deno.test("migrate() from revision 011 copies each image's caption word IDs onto its row", async () => {
  await assertCopiedOntoRows({
    from: "011_tag_name_chars",
    dictionary: "caption_words",
    name: "word",
    prefix: "word",
    links: "image_words",
    id: "word_id",
    copy: "word_ids",
  });
});

Deno.test("a backfill that dies half-way is completed by the next run", async () => {
  const db = await freshDatabase();
  try {
    await migrate(db.sql, s3.store, { target: "002_thumbnail_key" });
    const seeded = await seedRevision002(db.sql, 8);
    const keysBefore = new Set(await Array.fromAsync(s3.store.list("images/")));
    await assert.rejects(
      migrate(db.sql, s3.store, {
        backfill: {
          batchSize: 3,
          afterImage: (n) => {
            if (n === 4) throw new Error("killed");
          },
        },
      }),
      /killed/,
    );
    const half = await db.sql`select count(*)::int as n from images where short_id is not null`;
    assert.equal(half[0].n, 4);
    const planned = await db.sql<{ image_id: string; short_id: string }[]>`
      select image_id, short_id from short_id_backfill`;
    assert.ok(planned.length > 0, "the plan of the unfinished batch survives");
    const applied = await migrate(db.sql, s3.store, { backfill: { batchSize: 3 } });
    const all = await allVersions();
    assert.deepEqual(applied, all.slice(all.indexOf("003b_backfill_short_ids")));
    await assertBackfilled(db.sql, seeded);
    // The rerun reused the planned IDs: no second copy under another key.
    for (const p of planned) {
      const [row] = await db.sql`select short_id from images where id = ${p.image_id}`;
      assert.equal(row.short_id, p.short_id);
    }
    const added = (await Array.fromAsync(s3.store.list("images/")))
      .filter((k) => !keysBefore.has(k)).sort();
    const ours = (await db.sql`select short_id from images`).map((r) => originalKey(r.short_id));
    assert.deepEqual(added, ours.sort(), "one copy per image, under the key its row names");
  } finally {
    await db.drop();
  }
});

Deno.test("two migrators started together apply each revision once", async () => {
  const db = await freshDatabase();
  const other = createSql(db.url);
  try {
    const [a, b] = await Promise.all([migrate(db.sql, s3.store), migrate(other, s3.store)]);
    const all = await allVersions();
    assert.deepEqual([...a, ...b].sort(), [...all].sort(), "every revision applied exactly once");
    const recorded = await db.sql`select count(*)::int as n from schema_migrations`;
    assert.equal(recorded[0].n, all.length);
  } finally {
    await other.end();
    await db.drop();
  }
});

Deno.test("a revision that fails half-way rolls back, is not recorded, and stops the run", async () => {
  const db = await freshDatabase();
  try {
    await migrate(db.sql, s3.store, { target: "004_short_id_required" });
    // 005 creates its table, then an index whose name this relation already takes.
    await db.sql`create table pending_deletes_due_idx (x int)`;
    await assert.rejects(
      migrate(db.sql, s3.store),
      (e: { code?: string }) => e.code === "42P07", // duplicate_table
    );
    const table = await db.sql`select 1 from pg_tables where tablename = 'pending_deletes'`;
    assert.equal(table.length, 0, "the statement before the failure was rolled back");
    const recorded = await db.sql<{ version: string }[]>`
      select version from schema_migrations order by version`;
    const all = await allVersions();
    assert.deepEqual(
      recorded.map((r) => r.version),
      all.slice(0, all.indexOf("004_short_id_required") + 1).sort(),
      "neither the failed revision nor any after it is recorded",
    );
    await db.sql`drop table pending_deletes_due_idx`;
    const applied = await migrate(db.sql, s3.store);
    assert.deepEqual(
      applied,
      all.slice(all.indexOf("005_pending_deletes")),
      "the next run applies it",
    );
  } finally {
    await db.drop();
  }
});

Deno.test("013 stores the near spellings of the words already in the dictionary", async () => {
  const db = await freshDatabase();
  try {
    await migrate(db.sql, s3.store, { target: "012_word_and_tag_index" });
    await db.sql`insert into caption_words (word) values ('facepalm'), ('facepralm'), ('thumbs')`;
    await migrate(db.sql, s3.store);
    const pairs = await db.sql<{ word: string; near: string }[]>`
      select o.word, w.word as near from caption_word_neighbours n
      join caption_words o on o.id = n.word_id join caption_words w on w.id = n.near_id
      order by 1`;
    assert.deepEqual(pairs.map((p) => [p.word, p.near]), [
      ["facepalm", "facepralm"],
      ["facepralm", "facepalm"],
    ]);
  } finally {
    await db.drop();
  }
});

Deno.test("the runner applies every migration file, in the order of their names", async () => {
  const files: string[] = [];
  for await (const e of Deno.readDir(new URL("../migrations/", import.meta.url))) {
    if (e.isFile && e.name.endsWith(".sql")) files.push(e.name.replace(/\.sql$/, ""));
  }
  const versions = (await allVersions()).filter((v) => !v.startsWith("003b_"));
  assert.deepEqual(versions, files.sort());
});

Deno.test("020 writes the word pairs of the captions already there, and keeps them after", async () => {
  const db = await freshDatabase();
  const pairs = async (shortId: string) =>
    (await db.sql<{ pair: string }[]>`
      select p.pair::text from caption_pairs p join images i on i.seq = p.image_seq
      where i.short_id = ${shortId} order by 1`).map((r) => r.pair);
  // Hashes of the pairs as the phrase test reads captions: NFKC, lower case, runs of letters and
  // digits, so "ＴＨＩＳ is—fine!" has the pairs "this is" and "is fine".
  const keys = async (...texts: string[]) =>
    (await db.sql<{ k: string }[]>`
      select distinct hashtextextended(t, 0)::text as k from unnest(${texts}::text[]) t
      order by 1`).map((r) => r.k);
  try {
    await migrate(db.sql, s3.store, { target: "019_caption_word_prefix" });
    await db.sql`
      insert into images (short_id, hash, content_type, size_bytes, width, height, text, text_source)
      values ('cap00001', 'h1', 'image/png', 10, 1, 1, 'ＴＨＩＳ is—fine!', 'ocr'),
             ('cap00002', 'h2', 'image/png', 10, 1, 1, null, null),
             ('cap00003', 'h3', 'image/png', 10, 1, 1, 'one', 'ocr')`;
    await migrate(db.sql, s3.store);
    assert.deepEqual(await pairs("cap00001"), await keys("this is", "is fine"));
    assert.deepEqual(await pairs("cap00002"), []);
    assert.deepEqual(await pairs("cap00003"), []);
    // From then on the triggers keep them: a new caption, a changed one, a new image, a deletion.
    await db.sql`update images set text = 'Fine, is this' where short_id = 'cap00001'`;
    await db.sql`update images set text = 'a b a b', text_source = 'manual'
      where short_id = 'cap00002'`;
    await db.sql`
      insert into images (short_id, hash, content_type, size_bytes, width, height, text, text_source)
      values ('cap00004', 'h4', 'image/png', 10, 1, 1, 'well then', 'ocr')`;
    assert.deepEqual(await pairs("cap00001"), await keys("fine is", "is this"));
    assert.deepEqual(await pairs("cap00002"), await keys("a b", "b a"));
    assert.deepEqual(await pairs("cap00004"), await keys("well then"));
    await db.sql`update images set text = null, text_source = null where short_id = 'cap00004'`;
    await db.sql`delete from images where short_id = 'cap00002'`;
    const [{ n }] = await db.sql<{ n: number }[]>`select count(*)::int as n from caption_pairs`;
    assert.equal(n, 2, "only cap00001's pairs are left");
  } finally {
    await db.drop();
  }
});
