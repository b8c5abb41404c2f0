import { clearToken, useToken } from "../client/api_client.ts";
import { loginHref } from "../client/ui.ts";

/** The header's sign-in state: "Sign in" on the server, "Sign out" once a token is found. */
export default function AuthNav({ next }: { next: string }) {
  const token = useToken();
  if (!token) return <a href={loginHref(next)}>Sign in</a>;
  return (
    <button
      type="button"
      class="link-button"
      onClick={() => {
        clearToken();
        if (location.pathname === "/upload") location.assign("/");
      }}
    >
      Sign out
    </button>
  );
}
