// The board's service worker, served at /sw.js with scope / and `Cache-Control: no-cache`
// (routes/web_app.ts). The build (adapters/islands/build.ts) writes it to _build/sw.js after a line
// `const BUILD = {"version": "...", "precache": ["/_static/...", ...]}`: the hashed files of that
// build, so a new build is a new worker, which takes over at once (skipWaiting, clients.claim).
//
// What it keeps (tests/browser/phone_test.ts):
// - the app shell: the offline page and the build's hashed files, per version;
// - the thumbnails of recently viewed images, at most MAX_THUMBS, to show offline;
// - images shared into the board (the manifest's share_target), until the upload page takes them.
// It never keeps a write, a request carrying Authorization, an API answer other than a
// thumbnail, or anything the server marks no-store.

/* global BUILD */
const SHELL = `shell-${BUILD.version}`;
const THUMBS = "thumbs-v1";
/** Where shared files wait for the upload page (client/share_inbox.ts reads it). */
const INBOX = "share-inbox-v1";
const MAX_THUMBS = 60;
const MAX_SHARED_FILES = 20;
const OFFLINE = "/offline";
const THUMBNAIL = /^\/api\/v1\/images\/([0-9A-Za-z]{8})\/thumbnail$/;
const DETAIL = /^\/i\/([0-9A-Za-z]{8})$/;

self.addEventListener("install", (event) => {
  event.waitUntil(
    (async () => {
      const cache = await caches.open(SHELL);
      await cache.addAll([OFFLINE, ...BUILD.precache]);
      await self.skipWaiting();
    })(),
  );
});

self.addEventListener("activate", (event) => {
  event.waitUntil(
    (async () => {
      for (const name of await caches.keys()) {
        if (name.startsWith("shell-") && name !== SHELL) await caches.delete(name);
      }
      await self.clients.claim();
    })(),
  );
});

self.addEventListener("fetch", (event) => {
  const request = event.request;
  const url = new URL(request.url);
  if (url.origin !== self.location.origin) return;
  if (request.method === "POST" && url.pathname === "/share-target") {
    event.respondWith(
      receiveShare(request).catch(() => Response.redirect("/upload?share=failed", 303)),
    );
    return;
  }
  if (request.method !== "GET" || request.headers.has("authorization")) return;
  if (url.pathname.startsWith("/_static/")) {
    event.respondWith(caches.match(request).then((hit) => hit ?? fetch(request)));
  } else if (THUMBNAIL.test(url.pathname)) {
    event.respondWith(thumbnail(request));
  } else if (request.mode === "navigate") {
    event.respondWith(navigate(request, event));
  }
});

/** A page from the network; offline, the offline library (routes/offline.tsx). */
async function navigate(request, event) {
  try {
    const response = await fetch(request);
    // A viewed image's thumbnail is kept, so the offline library can show it.
    const detail = DETAIL.exec(new URL(request.url).pathname);
    if (detail && response.ok) {
      event.waitUntil(
        thumbnail(new Request(`/api/v1/images/${detail[1]}/thumbnail`)).catch(() => {}),
      );
    }
    return response;
  } catch (err) {
    const offline = await caches.match(OFFLINE);
    if (offline) return offline;
    throw err;
  }
}

/** A thumbnail from the cache, else from the network, kept when the server allows it. */
async function thumbnail(request) {
  const cache = await caches.open(THUMBS);
  const hit = await cache.match(request);
  if (hit) return hit;
  const response = await fetch(request);
  if (keepable(response)) {
    await cache.put(request, response.clone());
    const keys = await cache.keys();
    // Oldest first (the order they were put in).
    for (const key of keys.slice(0, Math.max(0, keys.length - MAX_THUMBS))) await cache.delete(key);
  }
  return response;
}

function keepable(response) {
  const cacheControl = response.headers.get("cache-control") ?? "";
  return response.ok && response.type === "basic" && !/no-store|private/i.test(cacheControl);
}

/**
 * The share target's POST: its image files and text wait in INBOX (a new share replaces one not
 * yet taken), and the upload page, which may first send the person to sign in, picks them up.
 */
async function receiveShare(request) {
  const form = await request.formData();
  const files = form.getAll("files").filter((f) =>
    typeof f !== "string" && f.type.startsWith("image/")
  );
  const text = (name) => {
    const value = form.get(name);
    return typeof value === "string" ? value.slice(0, 2000) : "";
  };
  await caches.delete(INBOX);
  const inbox = await caches.open(INBOX);
  const kept = files.slice(0, MAX_SHARED_FILES);
  for (const [i, file] of kept.entries()) {
    await inbox.put(
      `/_share/file/${i}`,
      new Response(file, {
        headers: { "content-type": file.type, "x-file-name": encodeURIComponent(file.name) },
      }),
    );
  }
  const meta = {
    title: text("title"),
    text: text("text"),
    url: text("url"),
    files: kept.length,
    dropped: files.length - kept.length,
  };
  await inbox.put("/_share/meta", Response.json(meta));
  return Response.redirect("/upload?shared=1", 303);
}
