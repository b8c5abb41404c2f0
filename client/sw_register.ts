/**
 * Registers the board's service worker (static/sw.js, served at `/sw.js` with scope `/`) once the
 * page has loaded, so it never competes with the page's own requests. Every page loads this
 * module (adapters/islands/render.ts); a browser without service workers simply has none.
 */
if ("serviceWorker" in navigator) {
  addEventListener("load", () => {
    navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch((err) => {
      console.warn("the service worker was not registered", err);
    });
  });
}
