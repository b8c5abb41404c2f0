-- 008: perceptual hashes for near-duplicate search (issue 22).
-- A 64-bit perceptual hash (domain/similar.ts), null until the thumbnail worker or the backfill job
-- computes it. Internal: the API shows distances, never hashes.
alter table images add column phash bigint;

-- Multi-index hashing: the hash is four 16-bit blocks, each with its own index. Two hashes within
-- Hamming distance d have at least one block within floor(d / 4) of each other (pigeonhole), so a
-- search probes each block index for the few values that close (db/similar.ts). Each index also
-- carries the whole hash and the row's ID, so the full distance of every candidate is checked in
-- the index (an index-only scan) and only the matches are read from the table: measured at 1M
-- rows, a plain block index made PostgreSQL read ~8,000 scattered rows per search, and it chose
-- a parallel full scan instead (1.3-1.7 s). Partial: images without a hash cost nothing.
create index images_phash_b0_idx on images (((phash >> 48) & 65535)) include (phash, id)
  where phash is not null;
create index images_phash_b1_idx on images (((phash >> 32) & 65535)) include (phash, id)
  where phash is not null;
create index images_phash_b2_idx on images (((phash >> 16) & 65535)) include (phash, id)
  where phash is not null;
create index images_phash_b3_idx on images ((phash & 65535)) include (phash, id)
  where phash is not null;

-- Near-duplicate pairs within the default distance, written when an image gets its hash, so that
-- the "possible duplicates" view reads pairs instead of searching every image. a < b.
create table similar_pairs (
  a uuid not null references images (id) on delete cascade,
  b uuid not null references images (id) on delete cascade,
  distance smallint not null check (distance between 0 and 64),
  primary key (a, b),
  check (a < b)
);

create index similar_pairs_b_idx on similar_pairs (b);
