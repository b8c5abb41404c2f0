import AdminPage from "../islands/AdminPage.tsx";
import type { PageHandler } from "./_app.tsx";

/** `/admin`: users, invites and the audit log (an admin's; the API refuses anyone else). */
export const handler: PageHandler = (c, { render }) =>
  render(
    c,
    <section class="admin">
      <h1>Admin</h1>
      <AdminPage />
    </section>,
    { title: "Admin" },
  );
