/**
 * B14: the chat search (issue 43) at 1,000,000 captioned images (bench/seed_captions.ts), the
 * listing cache off (LISTING_CACHE_ENTRIES=0), concurrency 8, each request a different query of
 * one or two words drawn by the vocabulary's Zipf-like popularity:
 *
 * - Discord's `/react` command, signed as Discord signs it (Ed25519 over the timestamp and the
 *   body, WebCrypto here), answering the best match;
 * - Discord's autocomplete on the query, a word's first letters typed;
 * - `GET /api/v1/images?q=…&sort=relevance` against the same queries newest first.
 */
import { benchMain } from "./_lib/bench_main.ts";
import { databaseUrl, prewarm } from "./_lib/databases.ts";
import { load, loadLine } from "./_lib/load.ts";
import { ms, type Row, x } from "./_lib/results.ts";
import { zipf } from "./_lib/stats.ts";
import { mulberry32 } from "../tests/_harness/random.ts";
import { spawnBenchService } from "./_lib/service.ts";
import { SEED_DB } from "./seed.ts";
import { captionWord, seedCaptions, WORDS } from "./seed_captions.ts";

const hex = (b: Uint8Array) => Array.from(b, (v) => v.toString(16).padStart(2, "0")).join("");

/** A key pair for the service's DISCORD_PUBLIC_KEY, and Discord's signing with it. */
async function discordSigner() {
  const keys = await crypto.subtle.generateKey({ name: "Ed25519" }, true, [
    "sign",
    "verify",
  ]) as CryptoKeyPair;
  const publicKey = hex(new Uint8Array(await crypto.subtle.exportKey("raw", keys.publicKey)));
  const sign = async (timestamp: string, body: string) =>
    hex(
      new Uint8Array(
        await crypto.subtle.sign(
          "Ed25519",
          keys.privateKey,
          new TextEncoder().encode(timestamp + body),
        ),
      ),
    );
  return { publicKey, sign };
}

/** Concurrency 8 of `request`: a short warm-up, then the measured run. */
async function hammer(request: (i: number) => Promise<Response>) {
  await load({ concurrency: 8, durationMs: 500, maxRequests: 200 }, request);
  return await load(
    { concurrency: 8, durationMs: 5000, maxRequests: 4000 },
    (i) => request(i + 1000),
  );
}

benchMain("B14", "chat search, autocomplete and relevance at 1M images", async (notes) => {
  const seeded = await seedCaptions();
  notes.push(seeded.seeded ? `captions of ${SEED_DB} seeded now` : `${SEED_DB} already seeded`);
  notes.push(
    `${SEED_DB} read into the file cache first (${await prewarm(databaseUrl(SEED_DB))} MB)`,
  );
  const discord = await discordSigner();
  const svc = await spawnBenchService(databaseUrl(SEED_DB), null, {
    LISTING_CACHE_ENTRIES: "0",
    PUBLIC_BASE_URL: "https://reactions.example.com",
    DISCORD_PUBLIC_KEY: discord.publicKey,
  });
  const r = mulberry32(14);
  const draws = Array.from({ length: 8000 }, () => [r(), r(), r()]);
  const word = (i: number, k = 0) => captionWord(zipf(draws[i % draws.length][k], WORDS));
  // One word, or two (every third query), as people type a reaction's words.
  const query = (i: number) => (i % 3 === 2 ? `${word(i)} ${word(i, 1)}` : word(i));
  const interaction = async (type: 2 | 4, value: string) => {
    const body = JSON.stringify({
      type,
      id: "1",
      application_id: "2",
      token: "interaction-token",
      data: {
        id: "3",
        name: "react",
        type: 1,
        options: [{ name: "query", type: 3, value, ...(type === 4 ? { focused: true } : {}) }],
      },
    });
    const timestamp = String(Math.floor(Date.now() / 1000));
    return await fetch(`${svc.base}/api/v1/chat/discord`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-signature-ed25519": await discord.sign(timestamp, body),
        "x-signature-timestamp": timestamp,
      },
      body,
    });
  };
  const rows: Row[] = [];
  try {
    const found = await (await interaction(2, query(0))).json();
    if (found.type !== 4) throw new Error(`/react answered ${JSON.stringify(found)}`);
    const chat = await hammer((i) => interaction(2, query(i)));
    rows.push({
      metric: `Discord /react <1-2 words>, signed, concurrency 8 (${loadLine(chat)})`,
      value: `p50 ${ms(chat.p50)} / p99 ${ms(chat.p99)}`,
      baseline: "-",
      ratio: "-",
      target: "p99 < 30 ms",
      met: chat.p99 < 30 && chat.errors === 0,
    });
    const typed = await hammer((i) => interaction(4, word(i).slice(0, 2 + (i % 3))));
    rows.push({
      metric: `Discord autocomplete, 2-4 letters typed, concurrency 8 (${loadLine(typed)})`,
      value: `p50 ${ms(typed.p50)} / p99 ${ms(typed.p99)}`,
      baseline: "-",
      ratio: "-",
      target: "p99 < 10 ms",
      met: typed.p99 < 10 && typed.errors === 0,
    });
    const url = (i: number, sort: string) =>
      `${svc.base}/api/v1/images?q=${encodeURIComponent(query(i))}${sort}`;
    const newest = await hammer((i) => fetch(url(i, "")));
    const relevance = await hammer((i) => fetch(url(i, "&sort=relevance")));
    rows.push({
      metric: `GET /api/v1/images?q=<1-2 words>&sort=relevance, concurrency 8 (${
        loadLine(relevance)
      })`,
      value: `p50 ${ms(relevance.p50)} / p99 ${ms(relevance.p99)}`,
      baseline: `newest first, same queries: p99 ${ms(newest.p99)} (${loadLine(newest)})`,
      ratio: x(relevance.p99 / newest.p99),
      target: "≤ 1.5x",
      met: relevance.p99 / newest.p99 <= 1.5 && relevance.errors === 0,
    });
  } finally {
    await svc.stop();
  }
  return rows;
});
