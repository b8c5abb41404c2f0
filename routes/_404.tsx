import type { Context } from "hono";
import type { PageContext } from "./_app.tsx";

/** The not-found page, status 404; it ships no JavaScript. */
export function notFoundPage(c: Context, { render }: PageContext): Response {
  return render(
    c,
    <section class="message">
      <h1>Page not found</h1>
      <p>Nothing lives at this address. It may have been deleted, or the link is mistyped.</p>
      <p>
        <a href="/">Go to the library</a> or <a href="/tags">browse tags</a>.
      </p>
    </section>,
    { title: "Not found", status: 404, authNav: false },
  );
}

const PROBLEMS: Record<number, [string, string]> = {
  400: ["Bad request", "The address has a parameter this page cannot read."],
  429: [
    "Too many requests",
    "This address has sent too many at once. Please try again in a moment.",
  ],
  500: ["Something went wrong", "The page could not be loaded. Please try again in a moment."],
  503: [
    "Temporarily unavailable",
    "The board cannot reach its database or storage right now. Please try again in a few seconds.",
  ],
};

/** An error page for a failed request (`404` renders the not-found page). */
export function problemPage(c: Context, ctx: PageContext, status: number): Response {
  if (status === 404) return notFoundPage(c, ctx);
  const [title, text] = PROBLEMS[status] ?? PROBLEMS[500];
  return ctx.render(
    c,
    <section class="message">
      <h1>{title}</h1>
      <p>{text}</p>
      <p>
        <a href="/">Go to the library</a>
      </p>
    </section>,
    { title, status, authNav: false },
  );
}
