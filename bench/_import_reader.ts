/**
 * B7 helper: loads reader.ts's module graph (its main does not run when imported), prints a
 * line and exits at once.
 */
import "../reader.ts";

console.log("loaded");
Deno.exit(0);
