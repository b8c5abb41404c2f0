/**
 * The service configuration: every environment variable of docs/configuration.md, parsed once
 * with zod into a typed object that is passed into the app (`createApp(config)`).
 */
import { z } from "zod";
import { parseCidrList } from "./http/ip.ts";
import { parseAllowedHosts } from "./http/host.ts";
import { parsePublicBaseUrl } from "../domain/public_base_url.ts";
import { isEd25519PublicKeyHex } from "../domain/chat_signatures.ts";
import { StartupError } from "./startup.ts";

/** The parsed, typed configuration of one service instance. */
export type Config = z.infer<typeof schema>;

/** Raised when a variable has a bad value; the message names the variable. */
export class ConfigError extends StartupError {
  override name = "ConfigError";
}

const DATABASE_URL_KINDS = /^(postgres|postgresql|postgresql\+asyncpg):\/\//;

/** True when `url` is a PostgreSQL URL of one of the accepted kinds. */
export function isPostgresUrl(url: string): boolean {
  return DATABASE_URL_KINDS.test(url.trim());
}

/** `postgresql+asyncpg://` (the Python-era spelling) becomes `postgresql://` for postgres.js. */
export function normalizeDatabaseUrl(url: string): string {
  return url.trim().replace(/^postgresql\+asyncpg:\/\//, "postgresql://");
}

const emptyToUndefined = (v: unknown) => (typeof v === "string" && v.trim() === "" ? undefined : v);
const optionalString = z.preprocess(emptyToUndefined, z.string().optional());
const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  z.preprocess(
    emptyToUndefined,
    z.coerce.number().int(`must be a whole number`).min(min).max(max),
  );
const bool = (fallback: boolean) =>
  z.preprocess((v) => {
    if (typeof v !== "string" || v.trim() === "") return fallback;
    const s = v.trim().toLowerCase();
    if (["1", "true", "yes", "on"].includes(s)) return true;
    if (["0", "false", "no", "off"].includes(s)) return false;
    return v;
  }, z.boolean({ error: "must be true or false" }));

/** An API's base address (no trailing slash), `fallback` when unset. */
const apiBase = (fallback: string) =>
  z.preprocess(
    (v) => (typeof v === "string" && v.trim() !== "" ? v.trim() : fallback),
    z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).transform((s) =>
      s.replace(/\/+$/, "")
    ),
  );

/** The variables that turn a chat integration on (issue 43). */
const CHAT_SECRETS = [
  "DISCORD_PUBLIC_KEY",
  "SLACK_SIGNING_SECRET",
  "TELEGRAM_WEBHOOK_SECRET",
] as const;

/** All cores but one, at least one: the other is the event loop's, which every request needs. */
const coresButOne = () => Math.max(1, (navigator.hardwareConcurrency ?? 2) - 1);
/**
 * OCR processes: at nice 19 they only take idle cores, and each holds a few hundred MB, so two at
 * most unless configured; one could not keep up with two captioned uploads a second on two cores
 * (bench B10, figures in bench/RESULTS.md#notes-moved-from-code-comments).
 */
const defaultCaptionWorkers = () => Math.min(2, navigator.hardwareConcurrency ?? 1);

const schema = z.object({
  PORT: int(0, 65535).default(8000),
  HOST: z.preprocess(emptyToUndefined, z.string().default("0.0.0.0")),
  // The origin of links meant for others (previews, oEmbed, copy buttons); unset: the request's.
  PUBLIC_BASE_URL: z.preprocess(
    emptyToUndefined,
    z.string().transform((s, ctx) => {
      const parsed = parsePublicBaseUrl(s);
      if ("origin" in parsed) return parsed.origin;
      ctx.addIssue({ code: "custom", message: parsed.error });
      return z.NEVER;
    }).optional(),
  ),
  // How long a client's request may make no progress (and its headers take in all) before its
  // connection is closed (adapters/http/serve.ts); the handler's own time is not counted. 0: no
  // client timeouts (Deno.serve), only for a service that a proxy bounding slow clients fronts.
  CLIENT_TIMEOUT_SECONDS: int(0, 3600).default(30),
  // Host names the service answers for (adapters/http/host.ts); empty: any valid host[:port].
  ALLOWED_HOSTS: z.preprocess(
    (v) => v ?? "",
    z.string().transform((s, ctx) => {
      try {
        return parseAllowedHosts(s);
      } catch (e) {
        ctx.addIssue({ code: "custom", message: (e as Error).message });
        return z.NEVER;
      }
    }),
  ),
  DATABASE_URL: z.preprocess(
    emptyToUndefined,
    z.string().refine(isPostgresUrl, {
      message: "must start with postgres://, postgresql:// or postgresql+asyncpg://",
    }).transform(normalizeDatabaseUrl).optional(),
  ),
  DATA_DIR: z.preprocess(emptyToUndefined, z.string().default("./data")),
  S3_BUCKET: optionalString,
  S3_ENDPOINT: z.preprocess(emptyToUndefined, z.url().optional()),
  S3_REGION: z.preprocess(emptyToUndefined, z.string().default("us-east-1")),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_FORCE_PATH_STYLE: bool(true),
  // SPEC: stripped of leading and trailing whitespace before use; blank means unset.
  S3_TIMEOUT_SECONDS: int(1, 3600).default(15),
  S3_PUBLIC_BASE_URL: z.preprocess(
    (v) => (typeof v === "string" ? (v.trim() === "" ? undefined : v.trim()) : v),
    z.url().optional(),
  ),
  MAX_UPLOAD_BYTES: int(1).default(20_971_520),
  // Search by image (POST /images/search-by-image): its own size cap, and how many searches one
  // address may make a minute (api/search_by_image.ts); it is public and decodes an image.
  MAX_QUERY_IMAGE_BYTES: int(1).default(10_485_760),
  QUERY_IMAGES_PER_MINUTE: int(1, 100_000).default(30),
  MAX_IMAGE_PIXELS: int(1).default(50_000_000),
  THUMBNAIL_WORKERS: int(1, 64).default(coresButOne),
  // Video (issue 45, adapters/video/): FFmpeg's ffmpeg (ffprobe beside it); absent, video uploads
  // answer 415 video_unsupported and everything else works.
  FFMPEG_PATH: z.preprocess(emptyToUndefined, z.string().default("/usr/bin/ffmpeg")),
  MAX_VIDEO_SECONDS: int(1, 3600).default(60),
  // One FFmpeg run's limits: killed past the time, refused memory past the address space.
  FFMPEG_TIMEOUT_SECONDS: int(1, 3600).default(30),
  FFMPEG_MEMORY_MB: int(64, 65_536).default(1024),
  FFMPEG_WORKERS: int(1, 16).default(1),
  // One MP4 rendition's time limit (a background job: a transcode takes longer than a probe).
  VIDEO_RENDITION_TIMEOUT_SECONDS: int(1, 3600).default(120),
  CAPTION_WORKERS: int(1, 16).default(defaultCaptionWorkers),
  // How long the OCR processes wait for work before they stop (issue 45: a small idle footprint).
  CAPTION_IDLE_SECONDS: int(1, 86_400).default(60),
  // Caption searches and autocompletes at once (the search pool, db/client.ts). Each is a
  // millisecond or two of PostgreSQL's CPU, never waiting on a disk: more at once than the cores
  // PostgreSQL can have only time-slice them, and with PostgreSQL on the same machine, one core
  // stays the service's: fewer connections gave B10 a lower p99 on two cores (figures in
  // bench/RESULTS.md#notes-moved-from-code-comments). A PostgreSQL with cores of its own, or one
  // that reads from disk, gains from more (configured).
  SEARCH_CONNECTIONS: int(1, 64).default(coresButOne),
  DELIVERY_CACHE_MB: int(0, 65_536).default(64),
  LISTING_CACHE_ENTRIES: int(0, 100_000).default(256),
  ADMIN_USERNAME: z.preprocess(emptyToUndefined, z.string().default("admin")),
  ADMIN_PASSWORD: optionalString,
  JWT_SECRET: z.preprocess(
    emptyToUndefined,
    z.string().refine((s) => new TextEncoder().encode(s).length >= 32, {
      message: "must be at least 32 bytes",
    }).optional(),
  ),
  ACCESS_TOKEN_TTL_SECONDS: int(60).default(43_200),
  LOGIN_MAX_FAILURES: int(1).default(5),
  LOGIN_WINDOW_SECONDS: int(1).default(900),
  LOGIN_COOLDOWN_SECONDS: int(1).default(900),
  LOGIN_TRUSTED_PROXY_IPS: z.preprocess(
    (v) => v ?? "",
    z.string().transform((s, ctx) => {
      try {
        return parseCidrList(s);
      } catch (e) {
        ctx.addIssue({ code: "custom", message: (e as Error).message });
        return z.NEVER;
      }
    }),
  ),
  // Whether a LOGIN_TRUSTED_PROXY_IPS peer's X-Forwarded-Host names the origin of shared links
  // (adapters/http/origin.ts); only for a proxy that sets it itself, never passes a client's on.
  TRUST_FORWARDED_HOST: bool(false),
  // Whether a trusted proxy's X-Real-IP is believed first (SPEC's default), or only its
  // X-Forwarded-For, read from the right (cloud load balancers pass X-Real-IP through).
  LOGIN_CLIENT_IP_HEADER: z.preprocess(
    (v) => (typeof v === "string" ? v.trim().toLowerCase() || undefined : v),
    z.enum(["x-real-ip", "x-forwarded-for"]).default("x-real-ip"),
  ),
  // SPEC: default true, and an invalid value falls back to true.
  API_DOCS_ENABLED: z.preprocess((v) => {
    if (typeof v !== "string") return true;
    return !["0", "false", "no", "off"].includes(v.trim().toLowerCase());
  }, z.boolean()),
  LOG_LEVEL: z.preprocess(
    (v) => (typeof v === "string" ? v.trim().toLowerCase() || undefined : v),
    z.enum(["debug", "info", "warn", "error"]).default("info"),
  ),
  // Chat integrations (issue 43, docs/chat.md): each is on when its secret is set.
  // Discord: the application's public key (hex), which signs every interaction.
  DISCORD_PUBLIC_KEY: z.preprocess(
    (v) => (typeof v === "string" ? v.trim() || undefined : v),
    z.string().refine(isEd25519PublicKeyHex, {
      message: "must be the application's public key: 64 hex digits",
    }).transform((s) => s.toLowerCase()).optional(),
  ),
  // For `deno task chat:register` only (services/chat/register.ts): the application whose global
  // /react command it registers, the bot token that may, and the API's address (tests: a fake).
  DISCORD_APPLICATION_ID: z.preprocess(
    emptyToUndefined,
    z.string().regex(/^\d{1,20}$/, { message: "must be the application's ID (digits)" }).optional(),
  ),
  DISCORD_BOT_TOKEN: optionalString,
  DISCORD_API_BASE: apiBase("https://discord.com/api/v10"),
  // Slack: the app's signing secret, which signs every request Slack sends.
  SLACK_SIGNING_SECRET: optionalString,
  // The origins a button press's response_url may have; any other is never called.
  SLACK_RESPONSE_ORIGINS: z.preprocess(
    (v) => (typeof v === "string" && v.trim() !== "" ? v : "https://hooks.slack.com"),
    z.string().transform((s, ctx) => {
      const origins: string[] = [];
      for (const item of s.split(",").map((x) => x.trim()).filter(Boolean)) {
        const parsed = parsePublicBaseUrl(item);
        if ("error" in parsed) {
          ctx.addIssue({ code: "custom", message: `${item}: ${parsed.error}` });
          return z.NEVER;
        }
        origins.push(parsed.origin);
      }
      return origins;
    }),
  ),
  // Telegram: the secret token the webhook was set with (setWebhook's secret_token), which
  // Telegram sends in every update's X-Telegram-Bot-Api-Secret-Token.
  TELEGRAM_WEBHOOK_SECRET: z.preprocess(
    emptyToUndefined,
    z.string().regex(/^[A-Za-z0-9_-]{1,256}$/, {
      message: "must be 1-256 characters of A-Z, a-z, 0-9, _ and - (Telegram's rule)",
    }).optional(),
  ),
  // For `deno task chat:register` only: the bot's token, for setWebhook, and the API's address.
  TELEGRAM_BOT_TOKEN: optionalString,
  TELEGRAM_API_BASE: apiBase("https://api.telegram.org"),
}).superRefine((c, ctx) => {
  // Chat clients fetch the images from PUBLIC_BASE_URL: without it no link could be given.
  for (const key of CHAT_SECRETS) {
    if (c[key] && !c.PUBLIC_BASE_URL) {
      ctx.addIssue({
        code: "custom",
        path: ["PUBLIC_BASE_URL"],
        message: `is required when ${key} is set: chat clients fetch the images from it`,
      });
    }
  }
  if (c.DATABASE_URL) {
    for (const key of ["ADMIN_PASSWORD", "JWT_SECRET"] as const) {
      if (!c[key]) {
        ctx.addIssue({
          code: "custom",
          path: [key],
          message: "is required when DATABASE_URL is set",
        });
      }
    }
  }
});

/** The variables the service reads, in the order docs/configuration.md documents them. */
export const CONFIG_KEYS = Object.keys(schema.shape) as (keyof Config)[];

/**
 * Parses `env` (by default the process environment) into a Config.
 * Throws ConfigError naming every bad variable.
 */
export function loadConfig(env: Record<string, string | undefined> = Deno.env.toObject()): Config {
  const input: Record<string, string | undefined> = {};
  for (const key of CONFIG_KEYS) input[key] = env[key];
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const lines = result.error.issues.map((issue) => {
    const name = String(issue.path[0] ?? "config");
    const value = input[name];
    const shown = value === undefined || /SECRET|PASSWORD|TOKEN$/.test(name)
      ? ""
      : ` (got ${JSON.stringify(value)})`;
    return `${name}: ${issue.message}${shown}`;
  });
  // One bad value is one line; several are listed under the heading.
  if (lines.length === 1) throw new ConfigError(`Invalid configuration: ${lines[0]}`);
  throw new ConfigError(`Invalid configuration:\n  ${lines.join("\n  ")}`);
}

/** True when the service runs on the embedded default database (no DATABASE_URL). */
export function usesEmbeddedDatabase(config: Config): boolean {
  return !config.DATABASE_URL;
}
