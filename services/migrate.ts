/**
 * The migration runner: ordered revisions, each applied in a transaction, under a PostgreSQL
 * advisory lock so that replicas starting together apply each revision exactly once, and
 * recorded in `schema_migrations` (the SQL of both: db/schema_migrations.ts). The short-ID
 * backfill runs as its own step between 003 and 004: it copies objects in storage, so it works in
 * batches rather than in one transaction.
 */
import type { ObjectStore } from "../adapters/storage/mod.ts";
import { type BackfillOptions, backfillShortIds } from "./backfill_short_ids.ts";
import type { Sql } from "../db/client.ts";
import { lockMigrations } from "../db/schema_migrations.ts";

/** One revision: SQL run in a transaction, or a step of code that manages its own. */
export interface Migration {
  version: string;
  sql?: string;
  run?: (sql: Sql, store: ObjectStore) => Promise<void>;
}

const SQL_FILES = [
  "001_initial.sql",
  "002_thumbnail_key.sql",
  "003_short_id.sql",
  "004_short_id_required.sql",
  "005_pending_deletes.sql",
  "006_login_failures.sql",
  "007_tag_rules.sql",
  "008_similar.sql",
  "009_captions.sql",
  "010_image_tag_ids.sql",
  "011_tag_name_chars.sql",
  "012_word_and_tag_index.sql",
  "013_caption_word_neighbours.sql",
  "014_words_tags_index.sql",
  "015_pair_shared_tags.sql",
  "016_accounts.sql",
  "017_sends.sql",
  "018_video.sql",
  "019_caption_word_prefix.sql",
  "020_caption_pairs.sql",
  "021_caption_word_counts.sql",
];

/** The revisions in order, the backfill step included; `upTo` stops after that version. */
export async function loadMigrations(backfill: BackfillOptions = {}): Promise<Migration[]> {
  const out: Migration[] = [];
  for (const file of SQL_FILES) {
    const sql = await Deno.readTextFile(new URL(`../migrations/${file}`, import.meta.url));
    const version = file.replace(/\.sql$/, "");
    if (version.startsWith("004")) {
      out.push({
        version: "003b_backfill_short_ids",
        run: async (db, store) => void await backfillShortIds(db, store, backfill),
      });
    }
    out.push({ version, sql });
  }
  return out;
}

/** Options of a migration run. */
export interface MigrateOptions {
  /** Apply revisions up to and including this version only (tests start from older states). */
  target?: string;
  backfill?: BackfillOptions;
  log?: (msg: string, fields?: Record<string, unknown>) => void;
}

/** Applies every pending revision; returns the versions this call applied. */
export async function migrate(sql: Sql, store: ObjectStore, opts: MigrateOptions = {}) {
  const migrations = await loadMigrations(opts.backfill);
  const applied: string[] = [];
  const lock = await lockMigrations(sql);
  try {
    for (const m of migrations) {
      if (!lock.applied.has(m.version)) {
        const started = performance.now();
        if (m.sql) {
          await lock.applySql(m.version, m.sql);
        } else {
          await m.run!(sql, store);
          await lock.record(m.version);
        }
        applied.push(m.version);
        opts.log?.("migration applied", {
          version: m.version,
          ms: Math.round(performance.now() - started),
        });
      }
      if (m.version === opts.target) break;
    }
  } finally {
    await lock.release();
  }
  return applied;
}
