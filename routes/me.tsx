import MePage from "../islands/MePage.tsx";
import type { PageHandler } from "./_app.tsx";

/** `/me`: the signed-in account (guarded in the browser: the token lives in localStorage). */
export const handler: PageHandler = (c, { render }) =>
  render(
    c,
    <section class="account">
      <h1>Your account</h1>
      <MePage />
    </section>,
    { title: "Your account" },
  );
