/**
 * Bearer tokens for tests: a valid one, and the forgeries the service must refuse (tampered,
 * unsigned `alg: none` built by hand, HS512, another secret, expired, no `sub`, no `exp`).
 */
import { SignJWT } from "jose";
import { encodeBase64Url } from "../../domain/base64.ts";

const enc = new TextEncoder();
const b64 = (value: unknown) => encodeBase64Url(enc.encode(JSON.stringify(value)));

/** Signs `claims` with `secret` (HS256 unless `alg` says otherwise), exactly as given. */
export function sign(
  claims: Record<string, unknown>,
  secret: string,
  alg: "HS256" | "HS384" | "HS512" = "HS256",
): Promise<string> {
  return new SignJWT(claims).setProtectedHeader({ alg, typ: "JWT" }).sign(enc.encode(secret));
}

/** A valid token for `sub` (or the forgery named by the key), made with `secret`. */
export async function tokens(secret: string, sub = "admin"): Promise<{
  valid: string;
  refused: Record<string, string>;
}> {
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub, iat: now, exp: now + 3600 };
  const valid = await sign(claims, secret);
  const [header, , signature] = valid.split(".");
  const flipped = signature[0] === "A" ? `B${signature.slice(1)}` : `A${signature.slice(1)}`;
  return {
    valid,
    refused: {
      "tampered payload": `${header}.${b64({ ...claims, sub: "mallory" })}.${signature}`,
      "tampered signature": `${valid.split(".").slice(0, 2).join(".")}.${flipped}`,
      "unsigned (alg none)": `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`,
      "signed with HS512": await sign(claims, secret, "HS512"),
      "signed with another secret": await sign(claims, `${secret}-but-another-one`),
      "expired": await sign({ sub, iat: now - 7200, exp: now - 3600 }, secret),
      "without sub": await sign({ iat: now, exp: now + 3600 }, secret),
      "with an empty sub": await sign({ ...claims, sub: "" }, secret),
      "without exp": await sign({ sub, iat: now }, secret),
      "not a JWT": "not-a-jwt",
    },
  };
}
