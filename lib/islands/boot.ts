/**
 * Client boot module: hydrates every island the server marked. Each wrapper names its module
 * (`data-island-src`, a hashed `/_static/` URL from the manifest) and is followed by its props.
 */
import { h, hydrate } from "preact";

for (const el of document.querySelectorAll<HTMLElement>("[data-island]")) {
  const src = el.dataset.islandSrc;
  const next = el.nextElementSibling;
  const props = next?.hasAttribute("data-island-props") ? JSON.parse(next.textContent ?? "{}") : {};
  if (src) {
    import(src).then(
      (mod) => hydrate(h(mod.default, props), el),
      (err) => console.error(`island ${el.dataset.island} failed to load`, err),
    );
  }
}
