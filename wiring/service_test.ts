/**
 * buildService() puts the parts together in one order for every caller: the write side's parts
 * are stand-ins here that record what was asked of them (the real ones run in tests/main_test.ts,
 * tests/reader_test.ts and every test built on tests/_harness/app.ts).
 */
import assert from "node:assert/strict";
import { loadConfig } from "../adapters/config.ts";
import type { JobQueue } from "../adapters/jobs/mod.ts";
import { captureLogger } from "../adapters/log.ts";
import type { ObjectStore } from "../adapters/storage/mod.ts";
import type { Sql } from "../db/client.ts";
import { UploadState } from "../services/upload/state.ts";
import { type App, buildService, type Resources, type WriteSide } from "./service.ts";

const config = loadConfig({
  DATABASE_URL: "postgres://postgres@127.0.0.1:1/none",
  S3_BUCKET: "none",
  ADMIN_PASSWORD: "x".repeat(12),
  JWT_SECRET: "y".repeat(32),
});

/** A write side whose parts record their calls in `calls`; `failing` names a part that throws. */
function recording(failing?: string) {
  const calls: string[] = [];
  const call = (name: string) => {
    calls.push(name);
    if (name === failing) throw new Error(`${name} failed`);
  };
  const resources: Resources = {
    config,
    sql: {} as Sql,
    probeSql: {} as Sql,
    searchSql: {} as Sql,
    store: {} as ObjectStore,
    signIn: { username: "admin" },
    close: () => Promise.resolve(call("resources.close")),
  };
  const jobs = {
    stopTaking: () => Promise.resolve(call("jobs.stopTaking")),
    stop: (ms?: number) => Promise.resolve(call(`jobs.stop ${ms}`)),
  } as unknown as JobQueue;
  const writes: WriteSide = {
    openResources: () => Promise.resolve().then(() => call("openResources")).then(() => resources),
    migrate: () => Promise.resolve(call("migrate")),
    startThumbnails: () =>
      Promise.resolve().then(() => call("startThumbnails")).then(() => ({
        thumbnail: () => Promise.reject(new Error("not here")),
        stats: () => ({ workers: 2, busy: 0, queued: 0 }),
        close: () => call("thumbnails.close"),
      })),
    startJobs: (_c, _l, max) =>
      Promise.resolve().then(() => call(`startJobs ${max}`)).then(() => jobs),
    openVideo: () => Promise.resolve(null),
    warmUp: () => Promise.resolve().then(() => call("warmUp")).then(() => ({ ms: 1 })),
    lowerPixelThreads: () => (call("lowerPixelThreads"), { stop: () => call("pixels.stop") }),
    uploadState: () => (call("uploadState"), new UploadState()),
    ensureAssets: (dev) => Promise.resolve(call(`ensureAssets ${dev}`)).then(() => false),
    createApp: (services) => {
      call(`createApp ${services.uploads ? "uploads" : "none"} ${services.jobs ? "jobs" : "none"}`);
      return {} as App;
    },
    workImplications: () => Promise.resolve(call("workImplications")),
    workVideoRenditions: () => Promise.resolve(),
    startDeleteSweeper: () => (call("startDeleteSweeper"), () => call("sweeper.stop")),
    workSimilarBackfill: () => Promise.resolve(call("workSimilarBackfill")),
    workRecognition: (_j, _s, reader) =>
      Promise.resolve(call(`workRecognition ${typeof reader === "string" ? reader : "given"}`))
        .then(() => () => Promise.resolve(call("recognition.stop"))),
    raiseEventLoopPriority: () => (call("raiseEventLoopPriority"), -10),
  };
  return { calls, writes, resources };
}

Deno.test("buildService() with a write side starts what main.ts runs, in order; close() stops it last first", async () => {
  const { calls, writes } = recording();
  const { log, lines } = captureLogger("info");
  const service = await buildService({ config, log, writes });
  assert.deepEqual(calls, [
    "openResources",
    "migrate",
    "startThumbnails",
    "startJobs undefined",
    "warmUp",
    "lowerPixelThreads",
    "uploadState",
    "workImplications",
    "ensureAssets false",
    "createApp uploads jobs",
    "startDeleteSweeper",
    "workSimilarBackfill",
    "workRecognition engine",
    "raiseEventLoopPriority",
  ]);
  const messages = lines.map((l) => JSON.parse(l).msg);
  assert.deepEqual(messages, [
    "thumbnail workers started",
    "upload path warmed up",
    "event loop priority",
  ]);
  calls.length = 0;
  await service.close();
  assert.deepEqual(calls, [
    "jobs.stopTaking",
    "recognition.stop",
    "sweeper.stop",
    "jobs.stop undefined",
    "thumbnails.close",
    "pixels.stop",
    "resources.close",
  ]);
});

Deno.test("buildService() leaves out what the switches leave out (the tests' harness)", async () => {
  const { calls, writes, resources } = recording();
  const service = await buildService({
    config,
    log: captureLogger("warn").log,
    writes,
    resources,
    thumbnails: null,
    jobs: { maxConnections: 2 },
    recognition: { read: () => Promise.resolve({ text: "" }) },
    warmUp: false,
    sweeper: false,
    similarBackfill: false,
    priorities: false,
    buildAssets: false,
    jobsGraceMs: 1000,
  });
  assert.deepEqual(calls, [
    "migrate",
    "startJobs 2",
    "uploadState",
    "workImplications",
    "createApp uploads jobs",
    "workRecognition given",
  ]);
  calls.length = 0;
  await service.close();
  assert.deepEqual(calls, [
    "jobs.stopTaking",
    "recognition.stop",
    "jobs.stop 1000",
    "resources.close",
  ]);
});

Deno.test("a part that fails to start stops what had started, and buildService() throws", async () => {
  const { calls, writes } = recording("startJobs undefined");
  const { log } = captureLogger("error");
  await assert.rejects(buildService({ config, log, writes }), /startJobs undefined failed/);
  assert.deepEqual(calls, [
    "openResources",
    "migrate",
    "startThumbnails",
    "startJobs undefined",
    "warmUp",
    "lowerPixelThreads",
    "thumbnails.close",
    "pixels.stop",
    "resources.close",
  ]);
});
