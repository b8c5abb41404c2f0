-- 018: short videos as reactions (issue 45). A video's length in seconds (MP4 or WebM, probed by
-- FFmpeg at upload); null for stills and for GIFs and animated WebPs, whose length is not read.

alter table images add column duration_seconds double precision
  check (duration_seconds is null or duration_seconds > 0);

-- The MP4 rendition of a moving image (GIF, MP4, WebM: H.264, no sound), made by a background
-- job after the upload commits: its size in bytes once stored at renditions/{short_id}/video.mp4,
-- null until then and for stills. Its size lets the byte route answer ranges without asking
-- storage, as for originals.
alter table images add column mp4_bytes bigint check (mp4_bytes is null or mp4_bytes > 0);

-- The animated WebP preview the library plays on hover (at most 400 px and 6 s), made by the same
-- job before the MP4: its size once stored at renditions/{short_id}/preview.webp.
alter table images add column preview_bytes bigint
  check (preview_bytes is null or preview_bytes > 0);
