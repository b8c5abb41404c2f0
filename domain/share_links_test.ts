import assert from "node:assert/strict";
import {
  chatLink,
  isMovingType,
  movingBadge,
  playableMp4,
  PREVIEW_MAX_BYTES,
  shareLinks,
} from "./share_links.ts";

const O = "https://board.example";
const image = (content_type: string, video_url: string | null) => ({
  short_id: "aZ3kP9qX",
  content_type,
  video_url,
  width: 320,
  height: 240,
  size_bytes: 1000,
  thumbnail_key: "thumbnails/aZ3kP9qX.webp",
});

Deno.test("playableMp4(): the MP4 rendition once made, else an MP4 upload itself", () => {
  assert.equal(playableMp4(O, image("image/gif", null)), null);
  assert.equal(playableMp4(O, image("image/gif", "/x")), `${O}/aZ3kP9qX.mp4`);
  assert.equal(playableMp4(O, image("video/webm", null)), null);
  assert.equal(playableMp4(O, image("video/webm", "/x")), `${O}/aZ3kP9qX.mp4`);
  assert.equal(playableMp4(O, image("video/mp4", null)), `${O}/aZ3kP9qX.mp4`);
  assert.equal(
    playableMp4(O, image("video/mp4", "/x")),
    `${O}/api/v1/images/aZ3kP9qX/video.mp4`,
  );
  assert.equal(playableMp4(O, image("image/png", null)), null);
});

Deno.test("shareLinks(): og:video is a video's original or a GIF's MP4; its picture the poster", () => {
  const thumb = { url: `${O}/api/v1/images/aZ3kP9qX/thumbnail`, type: "image/webp" };
  const webm = shareLinks(O, image("video/webm", null));
  assert.deepEqual(webm.video, {
    url: `${O}/aZ3kP9qX.webm`,
    type: "video/webm",
    width: 320,
    height: 240,
  });
  assert.deepEqual({ url: webm.preview.url, type: webm.preview.type }, thumb);
  assert.deepEqual(shareLinks(O, image("image/gif", "/x")).video, {
    url: `${O}/aZ3kP9qX.mp4`,
    type: "video/mp4",
    width: 320,
    height: 240,
  });
  assert.equal(shareLinks(O, image("image/gif", null)).video, null);
  assert.equal(shareLinks(O, image("image/gif", null)).preview.url, `${O}/aZ3kP9qX.gif`);
  assert.equal(shareLinks(O, image("image/png", null)).video, null);
  assert.deepEqual(
    ["image/gif", "video/mp4", "video/webm", "image/webp", "image/png"].map(isMovingType),
    [true, true, true, false, false],
  );
});

Deno.test("chatLink(): a GIF too large to animate goes as its MP4 once made", () => {
  const big = { ...image("image/gif", "/x"), size_bytes: PREVIEW_MAX_BYTES + 1 };
  assert.equal(chatLink(O, big), `${O}/aZ3kP9qX.mp4`);
  assert.equal(chatLink(O, { ...big, video_url: null }), `${O}/aZ3kP9qX.gif`);
  assert.equal(chatLink(O, { ...big, size_bytes: PREVIEW_MAX_BYTES }), `${O}/aZ3kP9qX.gif`);
  assert.equal(chatLink(O, { ...big, content_type: "video/webm" }), `${O}/aZ3kP9qX.webm`);
});

Deno.test("movingBadge(): GIF, Video, and WebP for an animated WebP once its preview exists", () => {
  const badge = (content_type: string, preview_url: string | null) =>
    movingBadge({ content_type, preview_url });
  assert.equal(badge("image/gif", null), "GIF");
  assert.equal(badge("video/mp4", null), "Video");
  assert.equal(badge("video/webm", "/p"), "Video");
  assert.equal(badge("image/webp", "/api/v1/images/x/preview"), "WebP");
  assert.equal(badge("image/webp", null), null, "a still WebP");
  assert.equal(badge("image/png", null), null);
});
