import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ocrCommand, startEngine } from "./engine.ts";

/** The folders the OCR process may read: the npm packages and its own modules' folder. */
const ALLOWED = [
  fileURLToPath(new URL("../../node_modules", import.meta.url)),
  fileURLToPath(new URL(".", import.meta.url)).replace(/\/$/, ""),
];

/** Secrets of the service, set in this process's environment for the tests below. */
const SECRETS: Record<string, string> = {
  JWT_SECRET: "jwt-secret-that-must-stay-in-the-service",
  ADMIN_PASSWORD: "admin-password-that-must-stay-in-the-service",
  S3_SECRET_ACCESS_KEY: "s3-key-that-must-stay-in-the-service",
};

/** Runs `fn` with SECRETS in the environment, then puts the environment back. */
async function withSecrets(fn: () => Promise<void>) {
  const before = Object.fromEntries(Object.keys(SECRETS).map((k) => [k, Deno.env.get(k)]));
  for (const [k, v] of Object.entries(SECRETS)) Deno.env.set(k, v);
  try {
    await fn();
  } finally {
    for (const [k, v] of Object.entries(before)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
  }
}

Deno.test("the OCR process runs with no secret in its environment and reads only its folders", async () => {
  await withSecrets(async () => {
    const engine = await startEngine();
    try {
      // The running process itself, as the kernel sees it.
      const environ = (await Deno.readTextFile(`/proc/${engine.pid}/environ`))
        .split("\0").filter(Boolean);
      const keys = environ.map((entry) => entry.slice(0, entry.indexOf("=")));
      assert.deepEqual(
        keys.filter((k) => !["PATH", "HOME", "DENO_DIR", "XDG_CACHE_HOME"].includes(k)),
        [],
      );
      for (const secret of Object.values(SECRETS)) {
        assert.ok(!environ.some((entry) => entry.includes(secret)), "a secret leaked");
      }
      const cmdline = (await Deno.readTextFile(`/proc/${engine.pid}/cmdline`)).split("\0");
      assert.deepEqual(cmdline.filter((a) => /^-(-allow|-deny|A$)/.test(a)), [
        `--allow-read=${ALLOWED.join(",")}`,
        "--allow-sys=setPriority",
      ]);
    } finally {
      await engine.terminate();
    }
  });
});

Deno.test("under the OCR process's permissions a probe cannot read elsewhere, write, connect or run", async () => {
  const dir = await Deno.makeTempDir({ prefix: "ocr-probe-" });
  try {
    const secret = join(dir, "secrets.json");
    await Deno.writeTextFile(secret, JSON.stringify(SECRETS));
    const probe = join(dir, "probe.ts");
    await Deno.writeTextFile(
      probe,
      `const out: Record<string, string> = {};
const attempt = async (name: string, f: () => unknown) => {
  try { await f(); out[name] = "allowed"; } catch (e) { out[name] = (e as Error).name; }
};
for (const path of Deno.args) await attempt(path, () => Deno.readFile(path));
await attempt("env", () => Deno.env.get("HOME"));
await attempt("write", () => Deno.writeTextFile(Deno.args[0] + ".copy", "x"));
await attempt("net", () => Deno.connect({ hostname: "127.0.0.1", port: 9 }));
await attempt("run", () => new Deno.Command("true").output());
console.log(JSON.stringify(out));
`,
    );
    const inside = join(ALLOWED[1], "engine.ts");
    const { args, env } = ocrCommand(probe);
    const out = await new Deno.Command(Deno.execPath(), {
      args: [...args, secret, "/proc/self/environ", inside],
      clearEnv: true,
      env,
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: AbortSignal.timeout(120_000),
    }).output();
    const text = new TextDecoder().decode(out.stdout);
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
    assert.deepEqual(JSON.parse(text), {
      [secret]: "NotCapable",
      "/proc/self/environ": "NotCapable",
      [inside]: "allowed",
      env: "NotCapable",
      write: "NotCapable",
      net: "NotCapable",
      run: "NotCapable",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
