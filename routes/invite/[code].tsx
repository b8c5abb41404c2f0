import InviteForm from "../../islands/InviteForm.tsx";
import type { PageHandler } from "../_app.tsx";

/** `/invite/:code`: join the board with an invite (the API checks the code on submit). */
export const handler: PageHandler = (c, { render }) =>
  render(
    c,
    <section class="narrow">
      <h1>Join the board</h1>
      <p class="muted">Choose your name and password. You will be signed in.</p>
      <InviteForm code={(c.req.param("code") ?? "").slice(0, 64)} />
    </section>,
    { title: "Join the board" },
  );
