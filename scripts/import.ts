/**
 * `deno task import <folder>`: uploads a folder tree of images through the board's API, tagged
 * by sub-folder, sidecar and `--tags`; `--restore <export folder>` puts an export back. A client
 * of the public API only, so it works against a remote board. See services/transfer/.
 */
import { importMain } from "../services/transfer/mod.ts";

Deno.exit(await importMain(Deno.args));
