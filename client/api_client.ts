/**
 * The one API client of the islands (the interceptor): every request goes through `api()` or
 * `uploadImage()`, which attach `Authorization: Bearer <token>` from localStorage and, on a 401,
 * drop the token and send the visitor to the login page. Browser-only: no Deno APIs.
 */
import { signal } from "@preact/signals";
import { useEffect } from "preact/hooks";
import { loginHref } from "./ui.ts";

const TOKEN_KEY = "imageboard.token";
const EXPIRES_KEY = "imageboard.token_expires_at";

/**
 * The bearer token, or null. It is null on the server and on the first client render (so
 * hydration matches the server's HTML); `useToken()` loads it after mount.
 */
export const authToken = signal<string | null>(null);

/** The stored token when present and not expired. */
export function readToken(): string | null {
  try {
    const token = localStorage.getItem(TOKEN_KEY);
    const expiresAt = Number(localStorage.getItem(EXPIRES_KEY) ?? 0);
    if (token && (!expiresAt || Date.now() < expiresAt)) return token;
    if (token) clearToken();
  } catch {
    // storage disabled: signed out
  }
  return null;
}

/** Stores a token from the login response. */
export function storeToken(token: string, expiresInSeconds: number): void {
  localStorage.setItem(TOKEN_KEY, token);
  localStorage.setItem(EXPIRES_KEY, String(Date.now() + expiresInSeconds * 1000));
  authToken.value = token;
}

/** Forgets the token (sign out). */
export function clearToken(): void {
  try {
    localStorage.removeItem(TOKEN_KEY);
    localStorage.removeItem(EXPIRES_KEY);
  } catch {
    // nothing stored
  }
  authToken.value = null;
}

/** The token, loaded after hydration; components re-render when it changes. */
export function useToken(): string | null {
  useEffect(() => {
    authToken.value = readToken();
    const onStorage = (e: StorageEvent) => {
      if (e.key === TOKEN_KEY || e.key === null) authToken.value = readToken();
    };
    addEventListener("storage", onStorage);
    return () => removeEventListener("storage", onStorage);
  }, []);
  return authToken.value;
}

/** The signed-in account, as `GET /api/v1/me` answers it. */
export interface Me {
  username: string;
  role: "admin" | "member";
  created_at: string;
}

/** The signed-in account once loaded; null when signed out (or not loaded yet). */
export const currentUser = signal<Me | null>(null);
let loadingMe: Promise<void> | null = null;

/**
 * The signed-in account: loads `GET /api/v1/me` once per page when there is a token. A token the
 * service no longer accepts leaves it null and stays: the next write drops it and goes to the
 * login page, as for any rejected token (tests/browser/ui_test.ts).
 */
export function useMe(): Me | null {
  const token = useToken();
  useEffect(() => {
    if (!token) {
      currentUser.value = null;
      return;
    }
    loadingMe ??= (async () => {
      const res = await api("/api/v1/me", { allow401: true }).catch(() => null);
      const body = res?.ok ? await res.json().catch(() => null) : null;
      currentUser.value = body;
    })().finally(() => loadingMe = null);
  }, [token]);
  return token ? currentUser.value : null;
}

/** Drops the token and goes to the login page, coming back here afterwards. */
export function redirectToLogin(): void {
  clearToken();
  location.assign(loginHref(location.pathname + location.search));
}

/** An API answer that was not a success: its status and parsed JSON body (if any). */
export class ApiError extends Error {
  constructor(readonly status: number, readonly body: Record<string, unknown> | null) {
    super(typeof body?.detail === "string" ? body.detail : `Request failed (${status})`);
  }
}

/** Options of `api()`. */
export interface ApiOptions extends RequestInit {
  /** Leave a 401 to the caller (the login form) instead of redirecting. */
  allow401?: boolean;
}

/** `fetch` for the API with the bearer attached and the 401 rule applied. */
export async function api(path: string, opts: ApiOptions = {}): Promise<Response> {
  const { allow401, ...init } = opts;
  const headers = new Headers(init.headers);
  const token = readToken();
  if (token) headers.set("Authorization", `Bearer ${token}`);
  if (!headers.has("Accept")) headers.set("Accept", "application/json");
  const res = await fetch(path, { ...init, headers });
  if (res.status === 401 && !allow401) redirectToLogin();
  return res;
}

/** `api()` returning the parsed JSON body, or throwing an `ApiError`. */
export async function apiJson<T>(path: string, opts: ApiOptions = {}): Promise<T> {
  const res = await api(path, opts);
  const body = res.status === 204 ? null : await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, body);
  return body as T;
}

/** `apiJson()` with a JSON request body. */
export function sendJson<T>(method: string, path: string, data: unknown, opts: ApiOptions = {}) {
  const headers = new Headers(opts.headers);
  headers.set("Content-Type", "application/json");
  return apiJson<T>(path, { ...opts, method, headers, body: JSON.stringify(data) });
}

/** The outcome of one upload: status 0 means a network error. */
export interface UploadResult {
  status: number;
  body: Record<string, unknown> | null;
}

/**
 * Uploads one file with XMLHttpRequest (fetch has no upload progress) to `POST /api/v1/images`
 * as multipart `file` + `tags`, through the same bearer and 401 rules as `api()`.
 */
export function uploadImage(
  file: File,
  tags: string[],
  onProgress: (fraction: number) => void,
): Promise<UploadResult> {
  return new Promise((resolve) => {
    const form = new FormData();
    form.append("file", file, file.name || "pasted-image");
    if (tags.length) form.append("tags", tags.join(","));
    const xhr = new XMLHttpRequest();
    xhr.open("POST", "/api/v1/images");
    xhr.setRequestHeader("Accept", "application/json");
    const token = readToken();
    if (token) xhr.setRequestHeader("Authorization", `Bearer ${token}`);
    xhr.upload.onprogress = (e) => {
      if (e.lengthComputable) onProgress(e.loaded / e.total);
    };
    xhr.onload = () => {
      if (xhr.status === 401) redirectToLogin();
      let body: Record<string, unknown> | null = null;
      try {
        body = JSON.parse(xhr.responseText);
      } catch {
        // not JSON (a proxy's error page)
      }
      resolve({ status: xhr.status, body });
    };
    xhr.onerror = () => resolve({ status: 0, body: null });
    xhr.send(form);
  });
}
