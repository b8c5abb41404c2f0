/**
 * `deno task export <folder>`: every original, a manifest.jsonl and a README.txt, read through
 * the board's public API; resumable. See services/transfer/.
 */
import { exportMain } from "../services/transfer/mod.ts";

Deno.exit(await exportMain(Deno.args));
