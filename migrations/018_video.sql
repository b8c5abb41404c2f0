-- 018: short videos as reactions (issue 45). A video's length in seconds (MP4 or WebM, probed by
-- FFmpeg at upload); null for stills and for GIFs and animated WebPs, whose length is not read.

alter table images add column duration_seconds double precision
  check (duration_seconds is null or duration_seconds > 0);
