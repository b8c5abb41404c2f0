import assert from "node:assert/strict";
import type { Manifest } from "./manifest.ts";
import { registerIslands, renderPage } from "./render.ts";

const manifest: Manifest = {
  boot: "/_static/boot-AAAA.js",
  css: "/_static/app-BBBB.css",
  islands: {
    Echo: "/_static/Echo-CCCC.js",
    Outer: "/_static/Outer-DDDD.js",
    Fn: "/_static/Fn-F.js",
  },
  imports: { "/_static/Echo-CCCC.js": ["/_static/chunk-EEEE.js"] },
  files: {},
};

function Echo({ text }: { text: string }) {
  return <p class="echo">{text}</p>;
}
function Outer({ label }: { label: string }) {
  return (
    <section>
      <Echo text={label} />
    </section>
  );
}
registerIslands({ Echo, Outer });

const scripts = (html: string) => html.match(/<script\b[^>]*>/gi) ?? [];
const propsBlocks = (html: string) =>
  [...html.matchAll(/<script type="application\/json" data-island-props>(.*?)<\/script>/gs)]
    .map((m) => m[1]);

Deno.test("renderPage() escapes island props so a </script> in a prop runs nothing", () => {
  const evil = "</script><script>alert(1)</script><!-- & \u2028";
  const { html } = renderPage(<Echo text={evil} />, { title: "t", manifest });
  assert.ok(!html.includes("<script>alert(1)"), "no executable script from the prop");
  const tags = scripts(html);
  assert.deepEqual(tags, [
    `<script type="module" src="/_static/boot-AAAA.js">`,
    `<script type="application/json" data-island-props>`,
  ]);
  const [json] = propsBlocks(html);
  assert.ok(json.includes("\\u003c/script\\u003e"));
  assert.deepEqual(JSON.parse(json), { text: evil });
  assert.ok(html.includes("&lt;/script>&lt;script>alert(1)&lt;/script>"), "text is escaped");
});

Deno.test("renderPage() ships no script for a page without islands", () => {
  const page = renderPage(<p>plain</p>, { title: "Plain <page>", manifest, status: 404 });
  assert.equal(page.status, 404);
  assert.deepEqual(page.islands, []);
  assert.ok(!/<script/i.test(page.html));
  assert.ok(!page.html.includes("modulepreload"));
  assert.ok(page.html.startsWith('<!DOCTYPE html><html lang="en">'));
  assert.ok(page.html.includes("<title>Plain &lt;page&gt;</title>"));
  assert.ok(page.html.includes(`<link rel="stylesheet" href="/_static/app-BBBB.css">`));
  assert.ok(page.html.includes(`<meta name="viewport"`));
  assert.ok(page.html.includes(`<meta name="color-scheme" content="light dark">`));
});

Deno.test("renderPage() marks an island with its wrapper, props and the one boot script", () => {
  const page = renderPage(
    <main>
      <Echo text="hi" />
    </main>,
    { title: "t", manifest },
  );
  assert.deepEqual(page.islands, ["Echo"]);
  assert.equal(scripts(page.html).filter((s) => s.includes(`type="module"`)).length, 1);
  assert.ok(page.html.includes(`<script type="module" src="/_static/boot-AAAA.js"></script>`));
  assert.ok(
    page.html.includes(
      `<main><div data-island="Echo" data-island-src="/_static/Echo-CCCC.js">` +
        `<p class="echo">hi</p></div><script type="application/json" data-island-props>` +
        `{"text":"hi"}</script></main>`,
    ),
  );
  assert.ok(page.html.includes(`<link rel="modulepreload" href="/_static/Echo-CCCC.js">`));
  assert.ok(page.html.includes(`<link rel="modulepreload" href="/_static/chunk-EEEE.js">`));
  assert.ok(!page.html.includes("style="), "no inline style (the CSP forbids it)");
});

Deno.test("renderPage() marks only the outermost of nested islands", () => {
  const { html, islands } = renderPage(<Outer label="x" />, { title: "t", manifest });
  assert.deepEqual(islands, ["Outer"]);
  assert.equal(html.match(/data-island=/g)?.length, 1);
  assert.ok(html.includes(`<section><p class="echo">x</p></section>`));
});

Deno.test("renderPage() rejects a function prop on an island", () => {
  const Fn = ({ onX }: { onX: () => void }) => <button type="button" onClick={onX}>x</button>;
  registerIslands({ Fn });
  assert.throws(
    () => renderPage(<Fn onX={() => {}} />, { title: "t", manifest }),
    /props must be JSON/,
  );
});
