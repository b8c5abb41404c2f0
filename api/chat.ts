/**
 * The chat integrations' webhooks (issue 43, docs/chat.md). Each is public in ROUTE_RULES: a
 * platform proves itself by its signature, not a bearer token. The order inside each route is the
 * invariant the tests hold: unconfigured answers 404; then the signature and its timestamp (or
 * Telegram's secret token) are checked (401 `bad_signature`) before the body is parsed or anything
 * is searched or counted (tests/chat_discord_test.ts, tests/chat_telegram_test.ts). Bodies are capped at 64 KiB by api/body_limit.ts like every other.
 * The request log records the method, path and status only (wiring/app_shell.ts), never a body or
 * a header, so no signature or secret reaches it.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { discordVerifier, sameSecret, slackSignatureValid } from "../domain/chat_signatures.ts";
import { AppError } from "../domain/errors.ts";
import type { ReadModel } from "../domain/types.ts";
import { discordInteractions } from "../services/chat/discord.ts";
import { chatSearch, mostSentFrom, type RecordSend } from "../services/chat/search.ts";
import { recordSend } from "../db/sends.ts";
import { isShortId } from "../domain/short_id.ts";
import { slackCommands } from "../services/chat/slack.ts";
import { telegramUpdates } from "../services/chat/telegram.ts";
import type { Services } from "../services/deps.ts";
import type { AppEnv } from "./env.ts";
import { json } from "./images.ts";
import { guard } from "./permissions.ts";
import { newRouter } from "./router.ts";
import { errorResponse } from "./schemas.ts";

/** The Discord interactions endpoint's path, under /api/v1. */
export const DISCORD_PATH = "/chat/discord";
/** The Slack slash command's and its buttons' paths, under /api/v1. */
export const SLACK_PATH = "/chat/slack";
export const SLACK_ACTIONS_PATH = "/chat/slack/actions";
/** The Telegram bot's webhook path, under /api/v1. */
export const TELEGRAM_PATH = "/chat/telegram";

const badSignature = () =>
  new AppError("bad_signature", "Missing, invalid or stale request signature");

/** The body as JSON, or 400. */
function parseJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(new TextDecoder().decode(body));
  } catch {
    throw new AppError("bad_request", "The body is not JSON");
  }
}

/** The chat webhooks of one service. */
export function chatRoutes(services: Services, read: ReadModel) {
  const { config } = services;
  const app = newRouter();
  const search = chatSearch(read, mostSentFrom(services.sql, config.S3_PUBLIC_BASE_URL));
  const sends: RecordSend = (shortId, sender) =>
    isShortId(shortId) ? recordSend(services.sql, shortId, sender) : Promise.resolve(false);

  app.openAPIRegistry.registerPath({
    method: "post",
    path: DISCORD_PATH,
    operationId: "discordInteraction",
    tags: ["chat"],
    summary: "Discord's interactions endpoint: PING, the /react command, its buttons and " +
      "autocomplete (docs/chat.md)",
    description: "Signed by Discord (`X-Signature-Ed25519` over `X-Signature-Timestamp` and the " +
      "raw body, DISCORD_PUBLIC_KEY). A timestamp more than five minutes from now is refused.",
    request: {
      headers: z.object({
        "x-signature-ed25519": z.string().openapi({ description: "Hex Ed25519 signature" }),
        "x-signature-timestamp": z.string().openapi({ description: "Unix seconds" }),
      }),
      body: { content: json(z.object({ type: z.number().int() }).passthrough()), required: true },
    },
    responses: {
      200: {
        description: "The interaction response",
        content: json(z.object({ type: z.number().int() }).passthrough()),
      },
      400: errorResponse("Not JSON, or an interaction the board does not handle"),
      401: errorResponse("Missing, invalid or stale signature (`code`: `bad_signature`)"),
      404: errorResponse("DISCORD_PUBLIC_KEY is not set"),
      413: errorResponse("Body over 64 KiB (`code`: `body_too_large`)"),
    },
  });

  const discordKey = config.DISCORD_PUBLIC_KEY;
  const verifyDiscord = discordKey ? discordVerifier(discordKey) : null;
  const discord = config.PUBLIC_BASE_URL
    ? discordInteractions(search, read, config.PUBLIC_BASE_URL, sends)
    : null;
  app.post(DISCORD_PATH, guard(services, "POST /chat/discord"), async (c) => {
    if (!verifyDiscord || !discord) throw new AppError("not_found", "Discord is not configured");
    const signature = c.req.header("x-signature-ed25519");
    const timestamp = c.req.header("x-signature-timestamp");
    if (!signature || !timestamp) throw badSignature();
    const body = new Uint8Array(await c.req.arrayBuffer());
    if (!verifyDiscord(signature, timestamp, body)) throw badSignature();
    return c.json(await discord.answer(parseJson(body)), 200);
  });

  const slackHeaders = z.object({
    "x-slack-signature": z.string().openapi({ description: "`v0=` and the hex HMAC-SHA256" }),
    "x-slack-request-timestamp": z.string().openapi({ description: "Unix seconds" }),
  });
  const slackResponses = {
    401: errorResponse("Missing, invalid or stale signature (`code`: `bad_signature`)"),
    404: errorResponse("SLACK_SIGNING_SECRET is not set"),
    413: errorResponse("Body over 64 KiB (`code`: `body_too_large`)"),
  };
  app.openAPIRegistry.registerPath({
    method: "post",
    path: SLACK_PATH,
    operationId: "slackCommand",
    tags: ["chat"],
    summary: "Slack's slash command `/react <query>`: an ephemeral preview of the best match " +
      "with Send, Next and Cancel (docs/chat.md)",
    description: "Signed by Slack: `X-Slack-Signature` is `v0=` and the HMAC-SHA256 of " +
      "`v0:{X-Slack-Request-Timestamp}:{body}` under SLACK_SIGNING_SECRET; a timestamp more than " +
      "five minutes from now is refused.",
    request: {
      headers: slackHeaders,
      body: {
        content: {
          "application/x-www-form-urlencoded": {
            schema: z.object({ text: z.string().optional() }).passthrough(),
          },
        },
        required: true,
      },
    },
    responses: {
      200: {
        description: "The ephemeral message",
        content: json(z.object({ response_type: z.string() }).passthrough()),
      },
      ...slackResponses,
    },
  });
  app.openAPIRegistry.registerPath({
    method: "post",
    path: SLACK_ACTIONS_PATH,
    operationId: "slackAction",
    tags: ["chat"],
    summary: "Slack's button presses (Send, Next, Cancel), carried out through the press's " +
      "`response_url`",
    description: "Signed as the slash command is. A `response_url` whose origin is not in " +
      "SLACK_RESPONSE_ORIGINS is never called (400).",
    request: {
      headers: slackHeaders,
      body: {
        content: {
          "application/x-www-form-urlencoded": {
            schema: z.object({ payload: z.string() }),
          },
        },
        required: true,
      },
    },
    responses: {
      200: { description: "Done (the message is changed through the response_url)" },
      400: errorResponse("No payload, not a button press, or a foreign response_url"),
      ...slackResponses,
    },
  });

  const slackSecret = config.SLACK_SIGNING_SECRET;
  const slack = config.PUBLIC_BASE_URL
    ? slackCommands(search, read, config.PUBLIC_BASE_URL, {
      responseOrigins: config.SLACK_RESPONSE_ORIGINS,
      sends,
    })
    : null;
  /** A verified Slack request's form, or 404 (unconfigured) or 401. */
  const slackForm = async (c: Context<AppEnv>): Promise<URLSearchParams> => {
    if (!slackSecret || !slack) throw new AppError("not_found", "Slack is not configured");
    const signature = c.req.header("x-slack-signature");
    const timestamp = c.req.header("x-slack-request-timestamp");
    if (!signature || !timestamp) throw badSignature();
    const body = new Uint8Array(await c.req.arrayBuffer());
    if (!slackSignatureValid(slackSecret, signature, timestamp, body)) throw badSignature();
    return new URLSearchParams(new TextDecoder().decode(body));
  };
  app.post(SLACK_PATH, guard(services, "POST /chat/slack"), async (c) => {
    const form = await slackForm(c);
    // Slack's certificate check of the address: answered, nothing searched.
    if (form.get("ssl_check") === "1") return c.body(null, 200);
    return c.json(await slack!.command(form.get("text") ?? ""), 200);
  });
  app.post(SLACK_ACTIONS_PATH, guard(services, "POST /chat/slack/actions"), async (c) => {
    const form = await slackForm(c);
    const payload = form.get("payload");
    if (payload === null) throw new AppError("bad_request", "No payload");
    await slack!.action(parseJson(new TextEncoder().encode(payload)), c.get("log"));
    return c.body(null, 200);
  });

  app.openAPIRegistry.registerPath({
    method: "post",
    path: TELEGRAM_PATH,
    operationId: "telegramWebhook",
    tags: ["chat"],
    summary: "The Telegram bot's webhook: inline queries, chosen results and messages to the bot " +
      "(docs/chat.md)",
    description: "`X-Telegram-Bot-Api-Secret-Token` must be TELEGRAM_WEBHOOK_SECRET. The answer " +
      "is a Bot API call (`answerInlineQuery`, `sendPhoto`, `sendAnimation`, `sendMessage`) made " +
      "in the webhook's response; 204 when there is nothing to do.",
    request: {
      headers: z.object({ "x-telegram-bot-api-secret-token": z.string() }),
      body: {
        content: json(z.object({ update_id: z.number().int() }).passthrough()),
        required: true,
      },
    },
    responses: {
      200: {
        description: "A Bot API call for Telegram to make",
        content: json(z.object({ method: z.string() }).passthrough()),
      },
      204: { description: "Nothing to answer" },
      400: errorResponse("Not JSON"),
      401: errorResponse("Missing or wrong secret token (`code`: `bad_signature`)"),
      404: errorResponse("TELEGRAM_WEBHOOK_SECRET is not set"),
      413: errorResponse("Body over 64 KiB (`code`: `body_too_large`)"),
    },
  });

  const telegramSecret = config.TELEGRAM_WEBHOOK_SECRET;
  const telegram = config.PUBLIC_BASE_URL
    ? telegramUpdates(search, config.PUBLIC_BASE_URL, sends)
    : null;
  app.post(TELEGRAM_PATH, guard(services, "POST /chat/telegram"), async (c) => {
    if (!telegramSecret || !telegram) throw new AppError("not_found", "Telegram is not configured");
    const given = c.req.header("x-telegram-bot-api-secret-token") ?? "";
    if (!sameSecret(given, telegramSecret)) throw badSignature();
    const body = new Uint8Array(await c.req.arrayBuffer());
    const answer = await telegram.answer(parseJson(body));
    return answer ? c.json(answer, 200) : c.body(null, 204);
  });

  return app;
}
