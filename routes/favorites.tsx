import Favorites from "../islands/Favorites.tsx";
import type { PageHandler } from "./_app.tsx";

/** `/favorites`: the signed-in person's favourites (loaded in the browser, with the token). */
export const handler: PageHandler = (c, { render }) =>
  render(
    c,
    <>
      <h1>Your favourites</h1>
      <Favorites />
    </>,
    { title: "Your favourites" },
  );
