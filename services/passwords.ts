/**
 * Password hashing: scrypt from node:crypto, never on the event loop (tests/accounts_signin_test.ts,
 * "twenty sign-ins at once leave the event loop free"): by default in Web Workers at a low CPU
 * priority (services/password_worker.ts), one per slot. OWASP's parameters (N=2^17, r=8, p=1)
 * take 128 MiB each, so at most HASH_SLOTS run at once; a hash that waits longer than
 * HASH_WAIT_MS for a slot is refused with `sign_in_busy` (503, Retry-After). Stored
 * self-describing, `scrypt$N$r$p$salt$hash` (base64), so the parameters can change later and old
 * hashes still verify.
 */
import { randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { availableParallelism } from "node:os";
import { AppError } from "../domain/errors.ts";
import type { DeriveRequest, DeriveResponse } from "./password_worker.ts";

/** scrypt's cost parameters. */
export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

/** OWASP's Password Storage Cheat Sheet, scrypt: N=2^17, r=8, p=1. */
export const OWASP_SCRYPT: ScryptParams = { N: 2 ** 17, r: 8, p: 1 };
const SALT_BYTES = 16;
const KEY_BYTES = 32;
/**
 * Hashes at once: each holds 128 * N * r bytes (128 MiB at OWASP's N) and a core; one core is
 * left to the event loop and the database.
 */
export const HASH_SLOTS = Math.max(1, Math.min(2, availableParallelism() - 1));
/** The longest a sign-in waits for a hashing slot before it is told to try again. */
export const HASH_WAIT_MS = 10_000;

/** Hashes and verifies passwords. */
export interface PasswordHasher {
  hash(password: string): Promise<string>;
  /** True when `password` matches `stored`; false for a malformed `stored`. */
  verify(password: string, stored: string): Promise<boolean>;
  /** Does the work of one verification and answers false: for a name with no password. */
  verifyNothing(password: string): Promise<false>;
}

/** A bounded queue of slots that refuses with `sign_in_busy` after `waitMs`. */
class HashSlots {
  #held = 0;
  readonly #waiting: (() => void)[] = [];
  constructor(readonly max: number, readonly waitMs: number) {}

  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#held < this.max) this.#held++;
    else {
      await new Promise<void>((resolve, reject) => {
        const wake = () => {
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(() => {
          this.#waiting.splice(this.#waiting.indexOf(wake), 1);
          reject(new AppError("sign_in_busy", "Too many sign-ins at once; try again shortly"));
        }, this.waitMs);
        this.#waiting.push(wake);
      });
    }
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      if (next) next(); // the slot passes on
      else this.#held--;
    }
  }
}

/** Derives a key: the work itself, off the event loop. */
export type Derive = (
  password: string,
  salt: Uint8Array,
  params: ScryptParams,
) => Promise<Uint8Array>;

/** scrypt's async form: Deno runs it on its pool of blocking threads, at the caller's priority. */
export const threadPoolDerive: Derive = (password, salt, params) => {
  const maxmem = 128 * params.N * params.r + 16 * 1024 * 1024;
  return new Promise((resolve, reject) =>
    scrypt(password.normalize("NFC"), salt, KEY_BYTES, { ...params, maxmem }, (err, key) => {
      if (err) reject(err);
      else resolve(new Uint8Array(key));
    })
  );
};

const WORKER_URL = new URL("./password_worker.ts", import.meta.url);
/** An idle hashing worker is ended after this long (sign-ins come in bursts). */
const WORKER_IDLE_MS = 30_000;

/**
 * scrypt in Web Workers at nice +5 (password_worker.ts), a worker per call in flight, kept
 * WORKER_IDLE_MS after its last one. The slots bound the calls in flight, so the workers too.
 */
export function workerDerive(): Derive {
  const idle: { worker: Worker; timer: ReturnType<typeof setTimeout> }[] = [];
  let next = 0;
  const take = (): Worker => {
    const kept = idle.pop();
    if (kept) {
      clearTimeout(kept.timer);
      return kept.worker;
    }
    return new Worker(WORKER_URL, { type: "module", name: "password" });
  };
  const give = (worker: Worker) => {
    const timer = setTimeout(() => {
      idle.splice(idle.findIndex((w) => w.worker === worker), 1);
      worker.terminate();
    }, WORKER_IDLE_MS);
    Deno.unrefTimer(Number(timer)); // an idle worker does not keep the process alive
    idle.push({ worker, timer });
  };
  return (password, salt, params) => {
    const worker = take();
    const id = ++next;
    return new Promise<Uint8Array>((resolve, reject) => {
      worker.onmessage = (event: MessageEvent<DeriveResponse>) => {
        if (event.data.id !== id) return;
        give(worker);
        if ("key" in event.data) resolve(event.data.key);
        else reject(new Error(event.data.error));
      };
      worker.onerror = (event) => {
        event.preventDefault();
        worker.terminate(); // not given back: a fresh one takes its place
        reject(new Error(`password worker failed: ${event.message}`));
      };
      const request: DeriveRequest = {
        id,
        password: password.normalize("NFC"),
        salt,
        params,
        keyBytes: KEY_BYTES,
      };
      worker.postMessage(request);
    });
  };
}

const b64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
const unb64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** The stored form's fields, or null when `stored` is not one. */
function parseStored(stored: string) {
  const m = /^scrypt\$(\d+)\$(\d+)\$(\d+)\$([A-Za-z0-9+/=]+)\$([A-Za-z0-9+/=]+)$/.exec(stored);
  if (!m) return null;
  const [N, r, p] = [Number(m[1]), Number(m[2]), Number(m[3])];
  // Bounds on what a stored string may ask for: no row can make a hash take gigabytes.
  if (N < 2 || N > 2 ** 20 || (N & (N - 1)) !== 0 || r < 1 || r > 32 || p < 1 || p > 16) {
    return null;
  }
  try {
    return { params: { N, r, p }, salt: unb64(m[4]), hash: unb64(m[5]) };
  } catch {
    return null;
  }
}

/**
 * The scrypt hasher, at `params` (OWASP's by default; tests pass cheaper ones), in workers
 * unless another `derive` is given.
 */
export function scryptHasher(
  params: ScryptParams = OWASP_SCRYPT,
  slots = new HashSlots(HASH_SLOTS, HASH_WAIT_MS),
  derive: Derive = workerDerive(),
): PasswordHasher {
  return {
    hash: (password) =>
      slots.run(async () => {
        const salt = new Uint8Array(randomBytes(SALT_BYTES));
        const key = await derive(password, salt, params);
        return `scrypt$${params.N}$${params.r}$${params.p}$${b64(salt)}$${b64(key)}`;
      }),
    verify: (password, stored) => {
      const parsed = parseStored(stored);
      if (!parsed) return Promise.resolve(false);
      return slots.run(async () => {
        const key = await derive(password, parsed.salt, parsed.params);
        return key.length === parsed.hash.length && timingSafeEqual(key, parsed.hash);
      });
    },
    verifyNothing: (password) =>
      slots.run(async () => {
        await derive(password, new Uint8Array(SALT_BYTES), params);
        return false as const;
      }),
  };
}

/** A hasher with its own slots (for tests of the limit). */
export function newHashSlots(max: number, waitMs: number) {
  return new HashSlots(max, waitMs);
}
