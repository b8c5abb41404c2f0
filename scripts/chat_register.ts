/**
 * `deno task chat:register`: registers the Discord command and the Telegram webhook of the
 * configured integrations (services/chat/register.ts, docs/chat.md). Reads the service's
 * configuration; prints a line per platform, and exits 1 when one failed or none is configured.
 */
import { loadConfig } from "../adapters/config.ts";
import { orExit } from "../adapters/startup.ts";
import { registerChat } from "../services/chat/register.ts";

const config = await orExit(() => loadConfig());
const results = await registerChat(config);
if (!results.length) {
  console.error(
    "Nothing to register: set DISCORD_APPLICATION_ID and DISCORD_BOT_TOKEN (Discord), or " +
      "TELEGRAM_BOT_TOKEN, TELEGRAM_WEBHOOK_SECRET and PUBLIC_BASE_URL (Telegram). See docs/chat.md.",
  );
  Deno.exit(1);
}
for (const r of results) {
  (r.ok ? console.log : console.error)(`${r.platform}: ${r.ok ? "" : "failed: "}${r.message}`);
}
Deno.exit(results.every((r) => r.ok) ? 0 : 1);
