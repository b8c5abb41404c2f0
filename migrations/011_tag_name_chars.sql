-- 011: the characters of each tag's name, indexed (issue 20). Autocomplete also offers names that
-- contain the text elsewhere than at the start; from three characters on the trigram index finds
-- them, but a one- or two-character text it cannot narrow, and a letter in no name (`x` at 10,000
-- tags) read every name: 1.7 ms of PostgreSQL per keystroke. Through this index the names that
-- hold the text's characters are found at once: a letter in none answers in 0.05 ms.
--
-- A function of its own, costed high: with string_to_array() itself in the index, PostgreSQL's
-- generic plan preferred to build the array of each of the 10,000 names (6 ms). PL/pgSQL, so that
-- it is not inlined and keeps its cost.
create function tag_name_chars(name text) returns text[]
  language plpgsql immutable strict parallel safe cost 1000
  as $$ begin return string_to_array(name, null); end $$;

create index tags_name_chars_idx on tags using gin (tag_name_chars(name));
