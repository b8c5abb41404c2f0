import assert from "node:assert/strict";
import { escapeHtml, jsonForScript } from "./html_escape.ts";

Deno.test("jsonForScript() escapes markup characters and round-trips through JSON.parse", () => {
  const value = { s: "</script><!--<b>&amp;\u2028\u2029", n: [1, "é"] };
  const out = jsonForScript(value);
  assert.ok(!/[<>&\u2028\u2029]/.test(out));
  assert.deepEqual(JSON.parse(out), value);
});

Deno.test("escapeHtml() escapes text and attribute specials", () => {
  assert.equal(
    escapeHtml(`<a href="x">'&'</a>`),
    "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;",
  );
});
