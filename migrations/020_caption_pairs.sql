-- 020: each caption's adjacent word pairs, so that the best level of a relevance search (the
-- query's words as a phrase, db/relevance_search.ts) is an index read. Without it, two common
-- words that seldom stand together made the search read and phrase-test up to its bound of images
-- with both words before it could say no older phrase was left (bench B14, the /react and
-- relevance rows' tails).
--
-- A caption's words are read here as the phrase test reads them: NFKC, lower case, runs of
-- [:alnum:] (db/relevance_search.ts rank()). So a phrase's pairs are all among its caption's
-- whenever the phrase test holds; a pair is a hash, and the test still decides.
create function caption_pair_keys(caption text) returns bigint[] language sql stable
parallel safe as $$
  select coalesce(array_agg(distinct hashtextextended(w[k] || ' ' || w[k + 1], 0)), '{}')
  from (select regexp_split_to_array(
    btrim(regexp_replace(lower(normalize(caption, NFKC)), '[^[:alnum:]]+', ' ', 'g')), ' ') as w) s
  cross join generate_series(1, cardinality(w) - 1) k
$$;

-- Which image's caption holds which pair, newest first per pair (like image_words), and by image
-- for a caption that changes or an image that goes.
create table caption_pairs (
  pair bigint not null,
  image_seq bigint not null
);

insert into caption_pairs (pair, image_seq)
select k, i.seq from images i cross join unnest(caption_pair_keys(i.text)) k
where i.text is not null;

alter table caption_pairs add primary key (pair, image_seq);
create index caption_pairs_seq_idx on caption_pairs (image_seq);

-- Kept exact in the writing transaction, whichever path writes the caption (upload, recognition,
-- an edit, a merge, a restore): tests/relevance_test.ts, "pairs follow the caption".
create function caption_pairs_write() returns trigger language plpgsql as $$
begin
  if tg_op <> 'INSERT' then
    delete from caption_pairs where image_seq = old.seq;
  end if;
  if tg_op <> 'DELETE' and new.text is not null then
    insert into caption_pairs (pair, image_seq)
    select k, new.seq from unnest(caption_pair_keys(new.text)) k;
  end if;
  return null;
end $$;

create trigger caption_pairs_insert after insert on images
  for each row when (new.text is not null) execute function caption_pairs_write();
create trigger caption_pairs_update after update of text on images
  for each row when (old.text is distinct from new.text) execute function caption_pairs_write();
create trigger caption_pairs_delete after delete on images
  for each row when (old.text is not null) execute function caption_pairs_write();
