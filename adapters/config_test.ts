import assert from "node:assert/strict";
import { ConfigError, loadConfig } from "./config.ts";

const required = {
  DATABASE_URL: "postgres://u@h/db",
  ADMIN_PASSWORD: "pw",
  JWT_SECRET: "x".repeat(32),
};

function badValue(env: Record<string, string>, variable: string) {
  assert.throws(() => loadConfig({ ...required, ...env }), (e: unknown) => {
    assert.ok(e instanceof ConfigError, String(e));
    assert.match(e.message, new RegExp(`\\b${variable}\\b`));
    return true;
  });
}

Deno.test("loadConfig() gives the README's documented defaults for an empty environment", () => {
  const c = loadConfig({});
  assert.equal(c.PORT, 8000);
  assert.equal(c.HOST, "0.0.0.0");
  assert.equal(c.DATABASE_URL, undefined);
  assert.equal(c.DATA_DIR, "./data");
  assert.equal(c.S3_BUCKET, undefined);
  assert.equal(c.S3_REGION, "us-east-1");
  assert.equal(c.S3_FORCE_PATH_STYLE, true);
  assert.equal(c.S3_PUBLIC_BASE_URL, undefined);
  assert.equal(c.MAX_UPLOAD_BYTES, 20_971_520);
  assert.equal(c.MAX_IMAGE_PIXELS, 50_000_000);
  assert.equal(c.THUMBNAIL_WORKERS, Math.max(1, navigator.hardwareConcurrency - 1));
  assert.equal(c.CAPTION_WORKERS, Math.min(2, navigator.hardwareConcurrency));
  assert.equal(c.CAPTION_IDLE_SECONDS, 60);
  assert.equal(c.SEARCH_CONNECTIONS, Math.max(1, navigator.hardwareConcurrency - 1));
  assert.equal(c.DELIVERY_CACHE_MB, 64);
  assert.equal(c.LISTING_CACHE_ENTRIES, 256);
  assert.equal(c.ADMIN_USERNAME, "admin");
  assert.equal(c.ACCESS_TOKEN_TTL_SECONDS, 43_200);
  assert.equal(c.LOGIN_MAX_FAILURES, 5);
  assert.equal(c.LOGIN_WINDOW_SECONDS, 900);
  assert.equal(c.LOGIN_COOLDOWN_SECONDS, 900);
  assert.deepEqual(c.LOGIN_TRUSTED_PROXY_IPS, []);
  assert.equal(c.API_DOCS_ENABLED, true);
  assert.equal(c.LOG_LEVEL, "info");
});

Deno.test("loadConfig() reads every variable", () => {
  const c = loadConfig({
    ...required,
    PORT: "9000",
    HOST: "127.0.0.1",
    DATA_DIR: "/var/lib/board",
    S3_BUCKET: "b",
    S3_ENDPOINT: "http://minio:9000",
    S3_REGION: "eu-west-1",
    S3_ACCESS_KEY_ID: "ak",
    S3_SECRET_ACCESS_KEY: "sk",
    S3_FORCE_PATH_STYLE: "false",
    S3_PUBLIC_BASE_URL: "https://cdn.example.com/board/",
    MAX_UPLOAD_BYTES: "1000",
    MAX_IMAGE_PIXELS: "2000",
    THUMBNAIL_WORKERS: "3",
    CAPTION_WORKERS: "4",
    CAPTION_IDLE_SECONDS: "5",
    SEARCH_CONNECTIONS: "6",
    DELIVERY_CACHE_MB: "0",
    LISTING_CACHE_ENTRIES: "0",
    ADMIN_USERNAME: "root",
    ACCESS_TOKEN_TTL_SECONDS: "600",
    LOGIN_MAX_FAILURES: "3",
    LOGIN_WINDOW_SECONDS: "60",
    LOGIN_COOLDOWN_SECONDS: "120",
    LOGIN_TRUSTED_PROXY_IPS: "10.0.0.0/8, 2001:db8::/32 192.168.1.1",
    API_DOCS_ENABLED: "false",
    LOG_LEVEL: "WARN",
  });
  assert.equal(c.PORT, 9000);
  assert.equal(c.HOST, "127.0.0.1");
  assert.equal(c.DATA_DIR, "/var/lib/board");
  assert.equal(c.S3_BUCKET, "b");
  assert.equal(c.S3_ENDPOINT, "http://minio:9000");
  assert.equal(c.S3_REGION, "eu-west-1");
  assert.equal(c.S3_ACCESS_KEY_ID, "ak");
  assert.equal(c.S3_SECRET_ACCESS_KEY, "sk");
  assert.equal(c.S3_FORCE_PATH_STYLE, false);
  assert.equal(c.S3_PUBLIC_BASE_URL, "https://cdn.example.com/board/");
  assert.equal(c.MAX_UPLOAD_BYTES, 1000);
  assert.equal(c.MAX_IMAGE_PIXELS, 2000);
  assert.equal(c.THUMBNAIL_WORKERS, 3);
  assert.equal(c.CAPTION_WORKERS, 4);
  assert.equal(c.CAPTION_IDLE_SECONDS, 5);
  assert.equal(c.SEARCH_CONNECTIONS, 6);
  assert.equal(c.DELIVERY_CACHE_MB, 0);
  assert.equal(c.LISTING_CACHE_ENTRIES, 0);
  assert.equal(c.ADMIN_USERNAME, "root");
  assert.equal(c.ADMIN_PASSWORD, "pw");
  assert.equal(c.JWT_SECRET, "x".repeat(32));
  assert.equal(c.ACCESS_TOKEN_TTL_SECONDS, 600);
  assert.equal(c.LOGIN_MAX_FAILURES, 3);
  assert.equal(c.LOGIN_WINDOW_SECONDS, 60);
  assert.equal(c.LOGIN_COOLDOWN_SECONDS, 120);
  assert.deepEqual(c.LOGIN_TRUSTED_PROXY_IPS.map((r) => r.text), [
    "10.0.0.0/8",
    "2001:db8::/32",
    "192.168.1.1/32",
  ]);
  assert.equal(c.API_DOCS_ENABLED, false);
  assert.equal(c.LOG_LEVEL, "warn");
});

Deno.test("loadConfig() accepts the three PostgreSQL URL kinds and normalises asyncpg", () => {
  for (
    const [given, want] of [
      ["postgres://u@h:5432/db", "postgres://u@h:5432/db"],
      ["postgresql://u@h/db", "postgresql://u@h/db"],
      ["postgresql+asyncpg://u:p@h/db", "postgresql://u:p@h/db"],
    ]
  ) {
    assert.equal(loadConfig({ ...required, DATABASE_URL: given }).DATABASE_URL, want);
  }
});

Deno.test("loadConfig() trims S3_PUBLIC_BASE_URL and treats a blank one as unset", () => {
  assert.equal(
    loadConfig({ S3_PUBLIC_BASE_URL: "  https://cdn.example.com  \n" }).S3_PUBLIC_BASE_URL,
    "https://cdn.example.com",
  );
  assert.equal(loadConfig({ S3_PUBLIC_BASE_URL: "   " }).S3_PUBLIC_BASE_URL, undefined);
});

Deno.test("loadConfig() falls back to true for API_DOCS_ENABLED values it cannot parse", () => {
  for (const v of ["true", "1", "yes", "", "maybe", "TRUE ", "2"]) {
    assert.equal(loadConfig({ API_DOCS_ENABLED: v }).API_DOCS_ENABLED, true, v);
  }
  for (const v of ["false", "0", "no", "off", " False "]) {
    assert.equal(loadConfig({ API_DOCS_ENABLED: v }).API_DOCS_ENABLED, false, v);
  }
});

Deno.test("loadConfig() names the variable of each bad value", () => {
  badValue({ PORT: "http" }, "PORT");
  badValue({ PORT: "70000" }, "PORT");
  badValue({ DATABASE_URL: "sqlite:///tmp/x.db" }, "DATABASE_URL");
  badValue({ DATABASE_URL: "mysql://h/db" }, "DATABASE_URL");
  badValue({ S3_ENDPOINT: "not a url" }, "S3_ENDPOINT");
  badValue({ S3_FORCE_PATH_STYLE: "sometimes" }, "S3_FORCE_PATH_STYLE");
  badValue({ S3_PUBLIC_BASE_URL: "cdn without scheme" }, "S3_PUBLIC_BASE_URL");
  badValue({ MAX_UPLOAD_BYTES: "20MB" }, "MAX_UPLOAD_BYTES");
  badValue({ MAX_UPLOAD_BYTES: "0" }, "MAX_UPLOAD_BYTES");
  badValue({ MAX_IMAGE_PIXELS: "-1" }, "MAX_IMAGE_PIXELS");
  badValue({ THUMBNAIL_WORKERS: "0" }, "THUMBNAIL_WORKERS");
  badValue({ THUMBNAIL_WORKERS: "1.5" }, "THUMBNAIL_WORKERS");
  badValue({ CAPTION_WORKERS: "0" }, "CAPTION_WORKERS");
  badValue({ CAPTION_WORKERS: "17" }, "CAPTION_WORKERS");
  badValue({ CAPTION_IDLE_SECONDS: "0" }, "CAPTION_IDLE_SECONDS");
  badValue({ SEARCH_CONNECTIONS: "0" }, "SEARCH_CONNECTIONS");
  badValue({ SEARCH_CONNECTIONS: "2.5" }, "SEARCH_CONNECTIONS");
  badValue({ DELIVERY_CACHE_MB: "-1" }, "DELIVERY_CACHE_MB");
  badValue({ LISTING_CACHE_ENTRIES: "-1" }, "LISTING_CACHE_ENTRIES");
  badValue({ JWT_SECRET: "short" }, "JWT_SECRET");
  badValue({ ACCESS_TOKEN_TTL_SECONDS: "soon" }, "ACCESS_TOKEN_TTL_SECONDS");
  badValue({ LOGIN_MAX_FAILURES: "0" }, "LOGIN_MAX_FAILURES");
  badValue({ LOGIN_WINDOW_SECONDS: "x" }, "LOGIN_WINDOW_SECONDS");
  badValue({ LOGIN_COOLDOWN_SECONDS: "-5" }, "LOGIN_COOLDOWN_SECONDS");
  badValue({ LOGIN_TRUSTED_PROXY_IPS: "10.0.0.0/8, not-an-ip" }, "LOGIN_TRUSTED_PROXY_IPS");
  badValue({ LOGIN_TRUSTED_PROXY_IPS: "10.0.0.0/33" }, "LOGIN_TRUSTED_PROXY_IPS");
  badValue({ LOG_LEVEL: "loud" }, "LOG_LEVEL");
});

Deno.test("loadConfig() requires ADMIN_PASSWORD and JWT_SECRET with DATABASE_URL", () => {
  badValue({ ADMIN_PASSWORD: "" }, "ADMIN_PASSWORD");
  badValue({ JWT_SECRET: "" }, "JWT_SECRET");
  // Without DATABASE_URL the embedded default generates them.
  assert.equal(loadConfig({}).ADMIN_PASSWORD, undefined);
});

Deno.test("loadConfig() never echoes a secret in its message", () => {
  assert.throws(
    () => loadConfig({ ...required, JWT_SECRET: "hunter2-short" }),
    (e: Error) => !e.message.includes("hunter2"),
  );
});

Deno.test("PUBLIC_BASE_URL is trimmed to an origin; anything but an http(s) origin is refused", () => {
  assert.equal(loadConfig({}).PUBLIC_BASE_URL, undefined);
  assert.equal(loadConfig({ PUBLIC_BASE_URL: "  " }).PUBLIC_BASE_URL, undefined);
  for (
    const [given, want] of [
      [" https://Reactions.Example.com/ \n", "https://reactions.example.com"],
      ["http://127.0.0.1:8000", "http://127.0.0.1:8000"],
      ["https://r.example:443", "https://r.example"],
    ]
  ) {
    assert.equal(loadConfig({ PUBLIC_BASE_URL: given }).PUBLIC_BASE_URL, want, given);
  }
  for (
    const bad of [
      "reactions.example.com",
      "ftp://reactions.example.com",
      "javascript:alert(1)",
      "https://reactions.example.com/?a=1",
      "https://reactions.example.com?",
      "https://reactions.example.com/#top",
      "https://reactions.example.com/board",
      "https://user:pw@reactions.example.com",
    ]
  ) {
    badValue({ PUBLIC_BASE_URL: bad }, "PUBLIC_BASE_URL");
  }
});

Deno.test("one bad value is a one-line message; several are listed", () => {
  assert.throws(
    () => loadConfig({ PUBLIC_BASE_URL: "ftp://x\ny" }),
    (e: Error) =>
      !e.message.includes("\n") && /^Invalid configuration: PUBLIC_BASE_URL: /.test(e.message),
  );
  assert.throws(
    () => loadConfig({ PUBLIC_BASE_URL: "ftp://x", PORT: "x" }),
    (e: Error) => e.message.split("\n").length === 3,
  );
});
