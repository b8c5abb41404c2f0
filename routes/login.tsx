import LoginForm from "../islands/LoginForm.tsx";
import { safeNext } from "../client/ui.ts";
import type { PageHandler } from "./_app.tsx";

/** `/login?next=/path`: the sign-in form; `next` is kept only when it is a local path. */
export const handler: PageHandler = (c, { render }) =>
  render(
    c,
    <section class="narrow">
      <h1>Sign in</h1>
      <LoginForm next={safeNext(c.req.query("next"))} />
    </section>,
    { title: "Sign in" },
  );
