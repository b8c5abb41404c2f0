/**
 * Escaping for text that ends up inside HTML. The JSON of island props is placed in a
 * `<script type="application/json">` element, whose content the HTML parser does not decode,
 * so a `</script>` inside a string would close the element early: the characters that can
 * start markup are replaced by their JSON unicode escapes, which `JSON.parse` reads back.
 */

const JSON_UNSAFE: Record<string, string> = {
  "<": "\\u003c",
  ">": "\\u003e",
  "&": "\\u0026",
  "\u2028": "\\u2028",
  "\u2029": "\\u2029",
};

/** `JSON.stringify(value)` made safe to embed raw inside a `<script>` element. */
export function jsonForScript(value: unknown): string {
  return JSON.stringify(value).replace(/[<>&\u2028\u2029]/g, (ch) => JSON_UNSAFE[ch]);
}

const HTML_UNSAFE: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Escapes text for an HTML text node or a double-quoted attribute value. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => HTML_UNSAFE[ch]);
}
