import OfflineLibrary from "../islands/OfflineLibrary.tsx";
import type { PageHandler } from "./_app.tsx";

/**
 * `/offline`: the page the service worker keeps and shows for any page it cannot fetch
 * (static/sw.js): the recently viewed images from its cache, and that the board is offline.
 */
export const handler: PageHandler = (c, { render }) =>
  render(
    c,
    <>
      <h1>Offline library</h1>
      <OfflineLibrary />
    </>,
    {
      title: "Offline",
      description: "The reaction images this device keeps for when it is offline.",
    },
  );
