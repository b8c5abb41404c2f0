/** B7 helper: an empty program that prints a line and exits, for the runtime's own start-up. */
console.log("loaded");
Deno.exit(0);
