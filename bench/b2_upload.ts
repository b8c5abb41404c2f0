/**
 * B2: one upload of a 12-megapixel JPEG end to end (HTTP multipart to the service process,
 * SHA-256, original stored on s3rver, thumbnail through the pool, database row), uploads one
 * at a time, each with distinct bytes. Baseline: B1's direct sharp thumbnail of the same JPEG,
 * measured again in this run and this process.
 */
import { readUploadForm } from "../api/upload_body.ts";
import { contentHash } from "../lib/ingest.ts";
import { makeThumbnail } from "../lib/thumbnails/make_thumbnail.ts";
import {
  benchMain,
  freshDatabase,
  median,
  ms,
  multipartBody,
  photoJpeg,
  s3rverStore,
  signIn,
  startS3Process,
  startService,
  timeRuns,
  uploadNew,
  withComment,
  x,
} from "./_lib.ts";

/**
 * Uploads distinct variants of `jpeg` one at a time to the service at `base`, alternating with
 * direct sharp thumbnails of it in this process, so a noisy moment hits both.
 */
async function uploadsAgainstSharp(base: string, jpeg: Uint8Array, tag: string) {
  const auth = await signIn(base);
  // Warm up: one upload (first use of the worker, the store, the DB pool).
  await uploadNew(base, auth, withComment(jpeg, `${tag}-warmup`));
  await makeThumbnail(jpeg);
  const uploads: number[] = [];
  const direct: number[] = [];
  await timeRuns(12, 90_000, async (i) => {
    // Distinct bytes each time, encoded before the clock starts: the client's own copying
    // is not the service's time.
    const form = multipartBody(withComment(jpeg, `${tag}-${i}`), ["bench"]);
    let t0 = performance.now();
    await uploadNew(base, auth, form);
    uploads.push(performance.now() - t0);
    t0 = performance.now();
    await makeThumbnail(jpeg);
    direct.push(performance.now() - t0);
  });
  return { uploads, direct };
}

if (import.meta.main) {
  await benchMain("B2", "upload of a 12 MP JPEG end to end", async (notes) => {
    const jpeg = await photoJpeg(4000, 3000, 1);
    const db = await freshDatabase();
    try {
      const s3 = await startS3Process();
      const svc = await startService(db.url, s3);
      const { uploads, direct } = await uploadsAgainstSharp(svc.base, jpeg, "b2");
      await svc.stop();
      // The parts of an upload that the thumbnail does not overlap, measured alone here.
      const form = multipartBody(jpeg, ["bench"]);
      const parse = median(
        await timeRuns(5, 10_000, () =>
          readUploadForm(
            new Request("http://localhost/api/v1/images", {
              method: "POST",
              headers: { "content-type": form.contentType },
              body: form.body,
            }),
            20_971_520,
          )),
      );
      const hash = median(await timeRuns(5, 10_000, () => Promise.resolve(contentHash(jpeg))));
      const store = s3rverStore(s3);
      const put = median(
        await timeRuns(
          5,
          20_000,
          (i) =>
            store.put(`probe/${i}`, jpeg, {
              contentLength: jpeg.length,
              contentType: "image/jpeg",
            }),
        ),
      );
      store.client.destroy();
      notes.push(
        `alone, in the bench process: readUploadForm() (the service's body reader and parser) ${
          ms(parse)
        }, ` +
          `SHA-256 ${ms(hash)}, S3 put of the original to s3rver ${ms(put)} (medians)`,
      );
      const u = median(uploads);
      const d = median(direct);
      notes.push(
        `JPEG ${(jpeg.length / 1e6).toFixed(2)} MB; uploads ${
          uploads.map((v) => v.toFixed(0)).join(", ")
        } ms; ` +
          `direct sharp ${direct.map((v) => v.toFixed(0)).join(", ")} ms`,
      );
      // The same service on its filesystem store: no S3 server on the two cores beside it.
      const fsSvc = await startService(db.url, null);
      let fs;
      try {
        fs = await uploadsAgainstSharp(fsSvc.base, jpeg, "b2-fs");
      } finally {
        await fsSvc.stop();
      }
      const fu = median(fs.uploads);
      const fd = median(fs.direct);
      return [{
        metric: `upload 12 MP JPEG, one at a time, median of ${uploads.length}`,
        value: ms(u),
        baseline: `sharp direct ${ms(d)}`,
        ratio: x(u / d),
        target: "<= 1.5x",
        met: u / d <= 1.5,
      }, {
        metric: "the same on the filesystem store (no s3rver sharing the cores)",
        value: ms(fu),
        baseline: `sharp direct ${ms(fd)}`,
        ratio: x(fu / fd),
        target: "- (diagnostic)",
        met: null,
      }];
    } finally {
      await db.drop();
    }
  });
}
