/** PUBLIC_BASE_URL's rules, apart from the config module so that they can be tested alone. */

/**
 * The origin `text` names (trimmed; `https://reactions.example.com`, no trailing slash), or an
 * error message: it must be an absolute http(s) URL with no path, query, fragment or credentials.
 */
export function parsePublicBaseUrl(text: string): { origin: string } | { error: string } {
  const s = text.trim();
  let url: URL;
  try {
    url = new URL(s);
  } catch {
    return { error: "must be an absolute http(s) URL such as https://reactions.example.com" };
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return { error: "must start with http:// or https://" };
  }
  if (url.search || s.includes("?")) return { error: "must have no query (?...)" };
  if (url.hash || s.includes("#")) return { error: "must have no fragment (#...)" };
  if (url.username || url.password) return { error: "must have no user name or password" };
  if (url.pathname !== "/") {
    return { error: "must be an origin, with no path: the service answers at the root" };
  }
  return { origin: url.origin };
}
