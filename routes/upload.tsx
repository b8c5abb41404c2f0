import Uploader from "../islands/Uploader.tsx";
import type { PageHandler } from "./_app.tsx";

/** `/upload`: guarded in the browser (the token lives in localStorage). */
export const handler: PageHandler = (c, { render }) =>
  render(
    c,
    <>
      <h1>Upload</h1>
      <p class="muted">JPEG, PNG, GIF, WebP or AVIF. Several at once is fine.</p>
      <Uploader />
    </>,
    { title: "Upload" },
  );
