import type { ComponentChildren } from "preact";
import AuthNav from "../islands/AuthNav.tsx";
import { loginHref } from "../client/ui.ts";

/** Props of the page frame. */
export interface LayoutProps {
  /** Path and query of this page, where signing in returns to. */
  path: string;
  /** Show the sign-in state (an island); pages without islands pass false. */
  authNav?: boolean;
  /** Link the API docs in the footer. */
  docs?: boolean;
  children: ComponentChildren;
}

const NAV = [["/", "Library"], ["/tags", "Tags"], ["/upload", "Upload"]] as const;

/** The frame of every page: header with navigation and sign-in state, main, footer. */
export function Layout({ path, authNav = true, docs, children }: LayoutProps) {
  const here = path.split("?")[0];
  return (
    <>
      <a class="skip-link" href="#main">Skip to content</a>
      <header class="site-header">
        <a class="brand" href="/">Reactions</a>
        <nav aria-label="Main">
          {NAV.map(([href, label]) => (
            <a key={href} href={href} aria-current={here === href ? "page" : undefined}>
              {label}
            </a>
          ))}
        </nav>
        <div class="auth">
          {authNav ? <AuthNav next={path} /> : <a href={loginHref(path)}>Sign in</a>}
        </div>
      </header>
      <main id="main">{children}</main>
      <footer class="site-footer">
        <a href="/tags">All tags</a>
        {docs && <a href="/docs">API docs</a>}
      </footer>
    </>
  );
}
