/**
 * Client boot module: hydrates every island the server marked. Each wrapper names its module
 * (`data-island-src`, a hashed `/_static/` URL from the manifest) and is followed by its props.
 * Islands load by dynamic import, which the page's load event does not wait for: once every one
 * has hydrated (or failed to load), `<html>` gets `data-hydrated`, which browser tests wait for
 * before they press a button (tests/_harness/playwright.ts `hydrated`).
 */
import { h, hydrate } from "preact";

const loads = [...document.querySelectorAll<HTMLElement>("[data-island]")].map((el) => {
  const src = el.dataset.islandSrc;
  const next = el.nextElementSibling;
  const props = next?.hasAttribute("data-island-props") ? JSON.parse(next.textContent ?? "{}") : {};
  if (!src) return Promise.resolve();
  return import(src).then(
    (mod) => hydrate(h(mod.default, props), el),
    (err) => console.error(`island ${el.dataset.island} failed to load`, err),
  );
});
Promise.all(loads).then(() => document.documentElement.setAttribute("data-hydrated", ""));
