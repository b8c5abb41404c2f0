import { clearToken, useMe, useToken } from "../client/api_client.ts";
import { loginHref } from "../client/ui.ts";

/**
 * The header's sign-in state: "Sign in" on the server; once a token is found, who is signed in
 * (a link to `/me`), their favourites, the admin page for an admin, and "Sign out".
 */
export default function AuthNav({ next }: { next: string }) {
  const token = useToken();
  const me = useMe();
  if (!token) return <a href={loginHref(next)}>Sign in</a>;
  return (
    <span class="auth-nav">
      {me && (
        <>
          <a href="/me" class="whoami" title="Your account">
            <span class="visually-hidden">Signed in as</span> {me.username}
          </a>
          <a href="/favorites">Favourites</a>
          {me.role === "admin" && <a href="/admin">Admin</a>}
        </>
      )}
      <button
        type="button"
        class="link-button"
        onClick={() => {
          clearToken();
          if (/^\/(upload|me|admin|favorites)$/.test(location.pathname)) location.assign("/");
        }}
      >
        Sign out
      </button>
    </span>
  );
}
