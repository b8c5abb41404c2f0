/**
 * Behind docs/deployment.md's nginx block (as an operator copies it), a client's own `X-Forwarded-Host`
 * cannot choose the origin that link previews and oEmbed advertise: nginx is a trusted proxy
 * here, and passes a client's forwarding headers on unless told to set them, so the service
 * believes `X-Forwarded-Host` only with TRUST_FORWARDED_HOST (adapters/http/origin.ts).
 */
import assert from "node:assert/strict";
import { makeThumbnail } from "../adapters/thumbnails/make_thumbnail.ts";
import type { ImageDto } from "../domain/types.ts";
import { startService } from "./_harness/app.ts";
import { authHeader, makeImage, upload } from "./_harness/images.ts";
import { NGINX_ADDRESS, pointBlockAt, readmeNginxBlock, startNginx } from "./_harness/nginx.ts";
import { serve } from "./_harness/playwright.ts";

const svc = await startService({
  thumbnails: { thumbnail: (b) => makeThumbnail(b) },
  env: { LOGIN_TRUSTED_PROXY_IPS: NGINX_ADDRESS },
});
const server = serve(svc.app.fetch);
// The block's two upstream servers are both this one service.
const upstream = new URL(server.url).host;
const block = await readmeNginxBlock();
const nginx = await startNginx(
  (port) => pointBlockAt(block, [upstream, upstream], port),
  "/api/v1/health",
);
Deno.test.afterAll(async () => {
  await nginx.stop();
  await server.close();
  await svc.close();
});

const res = await upload(svc.app, await authHeader(svc.app), await makeImage("png", 40, 30));
assert.equal(res.status, 201);
const img: ImageDto = await res.json();

Deno.test("a client's X-Forwarded-Host through nginx does not move previews or oEmbed", async () => {
  const headers = { "x-forwarded-host": "evil.example" };
  const page = await fetch(`${nginx.base}/i/${img.short_id}`, { headers });
  assert.equal(page.status, 200);
  const html = await page.text();
  assert.doesNotMatch(html, /evil\.example/);
  // nginx's `proxy_set_header Host $host` sends the name without the port.
  assert.match(html, /<meta property="og:url" content="http:\/\/127\.0\.0\.1\/i\//);

  const url = encodeURIComponent(`http://127.0.0.1/i/${img.short_id}`);
  const oembed = await fetch(`${nginx.base}/api/v1/oembed?url=${url}`, { headers });
  assert.equal(oembed.status, 200);
  const body = await oembed.json();
  assert.equal(body.url, `http://127.0.0.1/${img.short_id}.png`);
  assert.doesNotMatch(JSON.stringify(body), /evil\.example/);
});
