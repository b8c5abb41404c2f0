/**
 * `deno task mutants [filter...] [--timeout=SECONDS] [--no-check] [--list]`: applies each mutation
 * of tests/mutants/mutants.json, one at a time, to a temporary copy of the repository, runs the
 * test files that should catch it, and reports which survived.
 *
 * - Before anything runs, every `find` must occur exactly once in its file (tests/mutants/list.ts).
 * - A mutation is killed by a failing test, by a type-check failure of the mutated file (reported
 *   apart: a mutation that does not compile is a weak one), or by its run passing the time limit
 *   (a hang); it survives when its tests pass. `deno check` runs on the mutated file alone (its
 *   importers are not checked again), then the tests run with `--no-check`: a check of each test
 *   file's whole graph would cost most of a run. `--no-check` skips the check as well.
 * - `filter`: run only the mutations whose id or file contains it; `--list` checks and lists them.
 * - The database is resolved once, as `deno task test` resolves it (TEST_DATABASE_URL, a container
 *   or embedded PostgreSQL); each run's databases are dropped after it.
 * - Output of every run: tests/artifacts/mutants/<id>.log. Exit code 1 when any survived.
 */
import { join } from "node:path";
import { dropRunDatabases, newTestRun } from "../_harness/db.ts";
import { checkDatabaseUrl, givenDatabaseUrl, resolveTestDatabase } from "../_harness/resolve_db.ts";
import { applyMutation, checkList, failingTests, type Mutation, selectMutations } from "./list.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const LIST = join(ROOT, "tests/mutants/mutants.json");
const LOGS = join(ROOT, "tests/artifacts/mutants");
/** Left out of the copy; node_modules and _build are linked instead (read-only for tests). */
const SKIP = new Set([
  ".git",
  "node_modules",
  "_build",
  "data",
  "tests/artifacts",
  "bench/results",
]);
const LINKED = ["node_modules", "_build"];
/** Folders whose files the client bundle holds: a mutation there is built into the copy's own. */
const CLIENT_DIRS = ["islands/", "components/", "client/", "static/"];
/** The tests' lockfile (the service's deno.lock holds only what the service runs), if any. */
const TEST_LOCK = "tests/deno.lock";
/** A hang guard, not a budget: a test file of this repository runs in well under a minute. */
const DEFAULT_TIMEOUT_S = 600;

type Verdict = "killed" | "killed (type check)" | "killed (timeout)" | "survived";
interface Outcome {
  m: Mutation;
  verdict: Verdict;
  seconds: number;
  /** The failing tests, or why it survived. */
  note: string;
}

const args = Deno.args.filter((a) => !a.startsWith("--"));
const flags = new Set(Deno.args.filter((a) => a.startsWith("--")));
const timeoutFlag = [...flags].find((f) => f.startsWith("--timeout="));
const timeoutS = timeoutFlag ? Number(timeoutFlag.split("=")[1]) : DEFAULT_TIMEOUT_S;
if (!(timeoutS > 0)) {
  console.error(`mutants: --timeout takes seconds, not ${timeoutFlag}`);
  Deno.exit(2);
}

const readRepo = (path: string) => {
  try {
    return Deno.readTextFileSync(join(ROOT, path));
  } catch {
    return null;
  }
};
const { mutations, problems } = checkList(JSON.parse(Deno.readTextFileSync(LIST)), readRepo);
if (problems.length) {
  console.error(`mutants: ${LIST} needs updating:\n${problems.map((p) => `  ${p}`).join("\n")}`);
  Deno.exit(2);
}
const chosen = selectMutations(mutations, args);
if (!chosen.length) {
  console.error(`mutants: no mutation's id or file contains ${args.join(" or ")}`);
  Deno.exit(2);
}
if (flags.has("--list")) {
  for (const m of chosen) console.log(`${m.id.padEnd(40)} ${m.file}  ${m.description}`);
  console.log(`${chosen.length} mutations; every find string occurs exactly once`);
  Deno.exit(0);
}

const refusal = checkDatabaseUrl(givenDatabaseUrl());
if (refusal) {
  console.error(refusal);
  Deno.exit(2);
}
try {
  await Deno.stat(join(ROOT, "_build/manifest.json"));
} catch {
  const { buildAssets } = await import("../../adapters/islands/build.ts");
  await buildAssets({ writeGen: false });
}

/** Copies the repository to `to`, without SKIP, linking LINKED. */
async function copyRepo(from: string, to: string, rel = ""): Promise<void> {
  for await (const entry of Deno.readDir(join(from, rel))) {
    const path = rel ? `${rel}/${entry.name}` : entry.name;
    if (LINKED.includes(path)) await Deno.symlink(join(from, path), join(to, path));
    else if (SKIP.has(path)) continue;
    else if (entry.isSymlink) {
      await Deno.symlink(await Deno.readLink(join(from, path)), join(to, path));
    } else if (entry.isDirectory) {
      await Deno.mkdir(join(to, path));
      await copyRepo(from, to, path);
    } else await Deno.copyFile(join(from, path), join(to, path));
  }
}

/** Runs `deno <args>` in `cwd` in a session of its own (so a timeout ends its children too). */
async function run(
  cwd: string,
  denoArgs: string[],
  env: Record<string, string>,
  limitS: number,
): Promise<{ code: number; timedOut: boolean; output: string }> {
  const child = new Deno.Command("setsid", {
    args: [Deno.execPath(), ...denoArgs],
    cwd,
    env: { ...Deno.env.toObject(), NO_COLOR: "1", ...env },
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  current = child;
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    stopGroup(child.pid);
  }, limitS * 1000);
  try {
    const [status, out, err] = await Promise.all([
      child.status,
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
    ]);
    return { code: status.code, timedOut, output: `${out}\n${err}` };
  } finally {
    clearTimeout(timer);
    current = null;
  }
}

/** SIGTERM to the process group (its test harness stops its services), SIGKILL 5 s later. */
function stopGroup(pid: number) {
  const signal = (s: Deno.Signal) => {
    try {
      Deno.kill(-pid, s);
    } catch { /* already gone */ }
  };
  signal("SIGTERM");
  setTimeout(() => signal("SIGKILL"), 5000);
}

/** The copy's client bundle, built from its (mutated) sources instead of the linked one. */
async function buildInCopy(): Promise<void> {
  await Deno.remove(join(copy, "_build"), { recursive: true });
  const { buildAssets } = await import("../../adapters/islands/build.ts");
  await buildAssets({ root: copy, writeGen: false });
}

/** The copy's `_build` linked to the repository's again. */
async function linkBuild(): Promise<void> {
  await Deno.remove(join(copy, "_build"), { recursive: true }).catch(() => {});
  await Deno.symlink(join(ROOT, "_build"), join(copy, "_build"));
}

let current: Deno.ChildProcess | null = null;
const server = await resolveTestDatabase();
const copy = await Deno.makeTempDir({ prefix: "mutants-" });
const cleanUp = async () => {
  await Deno.remove(copy, { recursive: true }).catch(() => {});
  await server.stop();
};
Deno.addSignalListener("SIGINT", () => {
  if (current) stopGroup(current.pid);
  setTimeout(() => cleanUp().finally(() => Deno.exit(130)), 6000);
});
await copyRepo(ROOT, copy);
const lock = readRepo(TEST_LOCK) === null ? [] : [`--lock=${TEST_LOCK}`];
await Deno.mkdir(LOGS, { recursive: true });
console.log(
  `mutants: ${chosen.length} mutations, PostgreSQL from ${server.source}, copy in ${copy}`,
);

const started = performance.now();
const outcomes: Outcome[] = [];
try {
  for (const m of chosen) {
    const t0 = performance.now();
    const target = join(copy, m.file);
    const original = await Deno.readTextFile(target);
    await Deno.writeTextFile(target, applyMutation(original, m));
    const client = CLIENT_DIRS.some((dir) => m.file.startsWith(dir));
    const testRun = newTestRun();
    let verdict: Verdict;
    let note = "";
    let log = "";
    try {
      if (client) await buildInCopy();
      const limit = m.timeout_s ?? timeoutS;
      // SQL and other data files have no types to check.
      const checked = flags.has("--no-check") || !/\.tsx?$/.test(m.file)
        ? null
        : await run(copy, ["check", "--quiet", ...lock, m.file], {}, limit);
      log += checked ? `$ deno check ${m.file}\n${checked.output}\n` : "";
      if (checked && checked.code !== 0 && /TS\d+ \[ERROR\]/.test(checked.output)) {
        verdict = "killed (type check)";
        note = /TS\d+ \[ERROR\]: .*/.exec(checked.output)?.[0] ?? "";
      } else {
        const testArgs = [
          "test",
          "-A",
          "--no-check",
          ...lock,
          ...(m.filter ? ["--filter", m.filter] : []),
        ];
        const tested = await run(
          copy,
          [...testArgs, ...m.tests],
          { TEST_DATABASE_URL: server.url, ...testRun.env },
          limit,
        );
        log += `$ deno ${[...testArgs, ...m.tests].join(" ")}\n${tested.output}`;
        if (tested.timedOut) {
          verdict = "killed (timeout)";
          note = `no result in ${limit} s`;
        } else if (tested.code !== 0) {
          verdict = "killed";
          note = failingTests(tested.output).join("; ") || `exit code ${tested.code}`;
        } else {
          verdict = "survived";
          const passed = /ok \| (\d+) passed/.exec(tested.output)?.[1];
          note = passed === "0" ? "no test ran (check `filter`)" : `${passed} tests passed`;
        }
      }
    } finally {
      await Deno.writeTextFile(target, original);
      if (client) await linkBuild();
      await dropRunDatabases(server.url, testRun.id);
    }
    await Deno.writeTextFile(join(LOGS, `${m.id}.log`), log);
    const seconds = Math.round((performance.now() - t0) / 1000);
    outcomes.push({ m, verdict, seconds, note });
    console.log(`${verdict.padEnd(20)} ${String(seconds).padStart(4)} s  ${m.id}  ${note}`);
  }
} finally {
  await cleanUp();
}

const minutes = ((performance.now() - started) / 60_000).toFixed(1);
console.log(
  `\n| mutation | file | verdict | s | caught by / note |\n| --- | --- | --- | --- | --- |`,
);
for (const o of outcomes) {
  console.log(`| ${o.m.id} | ${o.m.file} | ${o.verdict} | ${o.seconds} | ${o.note} |`);
}
const survived = outcomes.filter((o) => o.verdict === "survived");
const byType = outcomes.filter((o) => o.verdict === "killed (type check)").length;
const byTime = outcomes.filter((o) => o.verdict === "killed (timeout)").length;
console.log(
  `\n${outcomes.length - survived.length} killed, ${survived.length} survived` +
    ` (${byType} by type check, ${byTime} by timeout) in ${minutes} min; logs in ${LOGS}`,
);
for (const o of survived) console.log(`survived: ${o.m.id} (${o.m.file}): ${o.m.description}`);
Deno.exit(survived.length ? 1 : 0);
