import assert from "node:assert/strict";
import {
  Ffmpeg,
  FfmpegMissingError,
  FfmpegRunError,
  FfmpegTimeoutError,
  parseProbe,
  VideoBusyError,
} from "./ffmpeg.ts";
import sharp from "sharp";
import { FFMPEG, ffmpegFile } from "../../tests/_harness/videos.ts";
import { sleep, until } from "../../tests/_harness/waits.ts";

/** A folder with `ffmpeg` and `ffprobe` stand-ins running `script` (a POSIX sh body). */
async function fakeFfmpeg(script: string): Promise<{ dir: string; path: string }> {
  const dir = await Deno.makeTempDir({ prefix: "fake-ffmpeg-" });
  for (const name of ["ffmpeg", "ffprobe"]) {
    // open() runs `-hide_banner -version` once: that passes.
    await Deno.writeTextFile(
      `${dir}/${name}`,
      `#!/bin/sh\n[ "$2" = -version ] && exit 0\n${script}\n`,
      { mode: 0o755 },
    );
  }
  return { dir, path: `${dir}/ffmpeg` };
}

const options = (path: string, over: Partial<Parameters<typeof Ffmpeg.open>[0]> = {}) => ({
  ffmpegPath: path,
  timeoutMs: 5000,
  memoryBytes: 512 * 1024 * 1024,
  concurrency: 1,
  ...over,
});

const text = (b: Uint8Array) => new TextDecoder().decode(b);
const BYTES = new Uint8Array([1, 2, 3]);

Deno.test("a run gets a cleared environment, a forced demuxer and only file and pipe", async () => {
  Deno.env.set("VIDEO_TEST_SECRET", "hunter2");
  const { dir, path } = await fakeFfmpeg('/usr/bin/env; echo "ARGS $*"');
  try {
    const ffmpeg = await Ffmpeg.open(options(path));
    const out = text(await ffmpeg.frame(BYTES, "webm"));
    assert.ok(!out.includes("hunter2"), out);
    assert.ok(!out.includes("VIDEO_TEST_SECRET"), out);
    assert.match(out, / -protocol_whitelist file,pipe -f webm -i file:\/\S+reaction-video-/);
  } finally {
    Deno.env.delete("VIDEO_TEST_SECRET");
    await Deno.remove(dir, { recursive: true });
  }
});

/** ffprobe's answer for a 64x48 H.264 video of 2 s. */
const PROBE_JSON =
  '{"streams":[{"codec_type":"video","codec_name":"h264","width":64,"height":48}],' +
  '"format":{"duration":"2.0"}}';

Deno.test("a frame is chosen among keyframes first, among the first 2 s only when they give none", async () => {
  // Each run's arguments go to `runs`; a keyframe run (`nokey`) writes what `KEY` says.
  const { dir, path } = await fakeFfmpeg(
    'D="$(/usr/bin/dirname "$0")"; echo "$*" >> "$D/runs"; ' +
      `case "$0" in *ffprobe) echo '${PROBE_JSON}'; exit ;; esac; ` +
      'case "$*" in *nokey*) case "$(/bin/cat "$D/KEY")" in fail) exit 1 ;; some) echo KEY ;; esac ;; ' +
      "*) echo WINDOW ;; esac",
  );
  const runs = async () => (await Deno.readTextFile(`${dir}/runs`)).trim().split("\n");
  const fit = "scale=w='min\\(400,iw\\)':h='min\\(400,ih\\)':force_original_aspect_ratio=decrease";
  try {
    const ffmpeg = await Ffmpeg.open(options(path));
    // A keyframe neither dark nor flat: one run, which decodes keyframes only, of the first 10 s.
    await Deno.writeTextFile(`${dir}/KEY`, "some");
    assert.equal(text(await ffmpeg.frame(BYTES, "mov", { maxSide: 400 })).trim(), "KEY");
    const [key, ...none] = await runs();
    assert.deepEqual(none, []);
    assert.match(
      key,
      / -t 10 -skip_frame nokey -loglevel error -protocol_whitelist file,pipe -f mov /,
    );
    assert.match(
      key,
      new RegExp(
        ` -map 0:v:0 -an -vf select=key,${fit},format=yuv420p,` +
          "signalstats,metadata=mode=select:key=lavfi.signalstats.YAVG:function=greater:value=48," +
          "entropy,metadata=mode=select:key=lavfi.entropy.normalized_entropy.normal.Y:" +
          "function=greater:value=0.02 -frames:v 1 ",
      ),
    );
    // Every keyframe dark or flat (the run writes nothing): 10 frames a second of the first 2 s,
    // frames nothing is predicted from not decoded, scaled before one is chosen.
    await Deno.remove(`${dir}/runs`);
    await Deno.writeTextFile(`${dir}/KEY`, "none");
    assert.equal(text(await ffmpeg.frame(BYTES, "mov", { maxSide: 400 })).trim(), "WINDOW");
    const [, window, ...more] = await runs();
    assert.deepEqual(more, []);
    assert.match(window, / -t 2 -skip_frame noref -loglevel error /);
    assert.match(
      window,
      new RegExp(` -map 0:v:0 -an -vf fps=10,${fit},thumbnail=n=20 -frames:v 1 `),
    );
    // The same from inspect(), the upload's poster, and from a caption's second frame.
    await Deno.remove(`${dir}/runs`);
    const { poster } = await ffmpeg.inspect(BYTES, "mov", { maxSide: 400 });
    assert.equal(text(await poster).trim(), "WINDOW");
    assert.equal(
      text(await ffmpeg.frame(BYTES, "webm", { fromSeconds: 3, background: true })).trim(),
      "WINDOW",
    );
    const frames = (await runs()).filter((r) => r.includes("-frames:v"));
    assert.equal(frames.length, 4, frames.join("\n"));
    // A WebM's keyframes are looked for in its first 2 s only (VP9 and AV1 decode every frame).
    assert.match(frames[2], / -ss 3 -t 2 -skip_frame nokey /);
    assert.match(frames[3], / -ss 3 -t 2 -skip_frame noref /);
    // A GIF (a caption's second frame) has no keyframes to choose among: its frames are.
    await Deno.remove(`${dir}/runs`);
    assert.equal(text(await ffmpeg.frame(BYTES, "gif")).trim(), "WINDOW");
    assert.deepEqual((await runs()).length, 1);
    // A failed keyframe run is the answer: the file is not decoded again.
    await Deno.remove(`${dir}/runs`);
    await Deno.writeTextFile(`${dir}/KEY`, "fail");
    await assert.rejects(ffmpeg.frame(BYTES, "mov"), FfmpegRunError);
    assert.equal((await runs()).length, 1);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * An H.264 MP4 (or `codec`'s `ext` file) of 160x120 at 10 fps: one segment after the other, each a colour with a white
 * grid (a grid of `0x3a3a3a` on `0x0c0c0c` for `dark`: dark, not flat) or `white` flat, for its
 * seconds; keyframes at `keys` seconds only (x264's scene-cut keyframes off).
 */
async function segments(
  parts: [string, number][],
  keys: number[],
  {
    ext = "mp4",
    codec = ["-c:v", "libx264", "-x264-params", "keyint=1000:min-keyint=1000:scenecut=0"],
  } = {},
): Promise<Uint8Array> {
  const inputs = parts.flatMap(([color, seconds]) => [
    "-f",
    "lavfi",
    "-i",
    color === "white"
      ? `color=c=white:s=160x120:r=10:d=${seconds}`
      : color === "dark"
      ? `color=c=0x0c0c0c:s=160x120:r=10:d=${seconds},drawgrid=w=16:h=16:t=2:c=0x3a3a3a`
      : `color=c=${color}:s=160x120:r=10:d=${seconds},drawgrid=w=16:h=16:t=2:c=white`,
  ]);
  return await ffmpegFile(ext, [
    ...inputs,
    "-filter_complex",
    `${parts.map((_, i) => `[${i}:v]`).join("")}concat=n=${parts.length}:v=1:a=0`,
    ...codec,
    "-pix_fmt",
    "yuv420p",
    "-force_key_frames",
    keys.join(","),
  ]);
}

/** Debian's FFmpeg, with the default memory limit (its threads' stacks need more than 512 MiB). */
// The installed FFmpeg: a hang guard of 60 s (a run takes well under a second alone; a CI run of
// four files at once saw one pass 5 s).
const REAL = options(FFMPEG, { memoryBytes: 1024 * 1024 * 1024, timeoutMs: 60_000 });

/** The colour a PNG mostly is: `red`, `blue`, `white` or `dark` (else `other`). */
async function colorOf(png: Uint8Array): Promise<string> {
  const [r, g, b] = (await sharp(png).stats()).channels.map((c) => c.mean);
  if (r > 200 && g > 200 && b > 200) return "white";
  if (r > 150 && b < 120) return "red";
  if (b > 150 && r < 120) return "blue";
  if (r < 60 && g < 60 && b < 60) return "dark";
  return "other";
}

Deno.test("a black first keyframe is passed for a later bright one, not the first 2 s", async () => {
  // Keyframes at 0 (dark, with a grid: not flat) and 3 s (blue); the first 2 s are dark then red.
  const clip = await segments([["dark", 1], ["red", 2], ["blue", 1]], [0, 3]);
  const ffmpeg = await Ffmpeg.open(REAL);
  assert.equal(await colorOf(await ffmpeg.frame(clip, "mov")), "blue");
  // The upload's poster, scaled, is the same keyframe.
  const { poster } = await ffmpeg.inspect(clip, "mov", { maxSide: 80 });
  const png = await poster;
  assert.equal(await colorOf(png), "blue");
  assert.equal((await sharp(png).metadata()).width, 80);
});

Deno.test("a VP9 WebM's poster is a keyframe, not the first bright frame its decoder also decodes", async () => {
  // FFmpeg 5.1's VP9 decoder ignores -skip_frame: red from 0.5 s is decoded, blue from 1 s is the
  // keyframe after the dark first one.
  const clip = await segments([["dark", 0.5], ["red", 0.5], ["blue", 1]], [0, 1], {
    ext: "webm",
    codec: ["-c:v", "libvpx-vp9", "-deadline", "realtime", "-cpu-used", "8", "-g", "1000"],
  });
  const ffmpeg = await Ffmpeg.open(REAL);
  assert.equal(await colorOf(await ffmpeg.frame(clip, "webm")), "blue");
});

Deno.test("a flat first keyframe (a white flash) is passed for a later one", async () => {
  const clip = await segments([["white", 1], ["red", 2], ["blue", 1]], [0, 3]);
  const ffmpeg = await Ffmpeg.open(REAL);
  assert.equal(await colorOf(await ffmpeg.frame(clip, "mov")), "blue");
});

Deno.test("a clip whose keyframes are all dark gets its frame from the first 2 s, not black", async () => {
  // Keyframes at 0 and 0.3 s, both in the dark half second; red from 0.5 s on.
  const clip = await segments([["dark", 0.5], ["red", 1.5]], [0, 0.3]);
  const ffmpeg = await Ffmpeg.open(REAL);
  assert.equal(await colorOf(await ffmpeg.frame(clip, "mov")), "red");
  const { poster } = await ffmpeg.inspect(clip, "mov", { maxSide: 400 });
  assert.equal(await colorOf(await poster), "red");
});

Deno.test("a run is niced and limited in address space when prlimit is there", async () => {
  const { dir, path } = await fakeFfmpeg("ulimit -v; /usr/bin/nice");
  try {
    const ffmpeg = await Ffmpeg.open(options(path));
    assert.equal(ffmpeg.prlimit, "/usr/bin/prlimit");
    const [limit, nice] = text(await ffmpeg.frame(BYTES, "mov")).trim().split("\n");
    assert.equal(limit, String(512 * 1024));
    assert.equal(nice, "10");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a run past its time limit is killed; the input file is removed", async () => {
  const { dir, path } = await fakeFfmpeg(
    'echo "$@" > "$(/usr/bin/dirname "$0")/args"; ' +
      "exec /bin/sleep 3600",
  );
  try {
    const ffmpeg = await Ffmpeg.open(options(path, { timeoutMs: 300 }));
    // A hang guard only: unkilled, the run would last an hour.
    let guard: ReturnType<typeof setTimeout> | undefined;
    const hang = new Promise((_, reject) => {
      guard = setTimeout(() => reject(new Error("the run was not killed")), 20_000);
    });
    try {
      await assert.rejects(Promise.race([ffmpeg.frame(BYTES, "mov"), hang]), FfmpegTimeoutError);
    } finally {
      clearTimeout(guard);
    }
    const input = /file:(\S+)/.exec(await Deno.readTextFile(`${dir}/args`))![1];
    await assert.rejects(Deno.stat(input), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("at most `concurrency` runs at once; a wait past the time limit is VideoBusyError", async () => {
  // Each run holds a lock folder for 200 ms and fails if another run holds it.
  const { dir, path } = await fakeFfmpeg(
    'L="$(/usr/bin/dirname "$0")/lock"; /bin/mkdir "$L" || exit 3; /bin/sleep 0.2; /bin/rmdir "$L"; echo ok',
  );
  try {
    const ffmpeg = await Ffmpeg.open(options(path));
    const runs = await Promise.allSettled([1, 2, 3].map(() => ffmpeg.frame(BYTES, "mov")));
    assert.deepEqual(runs.map((r) => r.status), ["fulfilled", "fulfilled", "fulfilled"]);
    // Three at once with one slot: a wait longer than a run's limit gives up.
    const short = await Ffmpeg.open(options(path, { timeoutMs: 300 }));
    const busy = await Promise.allSettled([1, 2, 3].map(() => short.frame(BYTES, "mov")));
    assert.ok(busy.some((r) => r.status === "rejected" && r.reason instanceof VideoBusyError));
    assert.equal(short.running, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a background run neither holds the upload path's slot nor runs at its priority", async () => {
  // A rendition (libx264) lasts until the test releases it; anything else answers at once. Each
  // run writes its nice value where its output goes: a file for a rendition, stdout for a frame.
  const { dir, path } = await fakeFfmpeg(
    'D="$(/usr/bin/dirname "$0")"; for a; do last="$a"; done; ' +
      'case "$*" in *libx264*) /usr/bin/nice > "${last#file:}"; /bin/touch "$D/started"; ' +
      'while [ ! -e "$D/release" ]; do /bin/sleep 0.05; done ;; ' +
      "*) /usr/bin/nice ;; esac",
  );
  try {
    // One slot. The rendition holds it until released, so a frame that shared it would wait its
    // whole limit, 10 s, and be VideoBusyError; 300 ms, the limit this test had, was also the
    // frame's own run limit, which a shell start at load 8 passed (a full run, DENO_JOBS=3).
    const ffmpeg = await Ffmpeg.open(options(path, { timeoutMs: 10_000 }));
    const rendition = ffmpeg.mp4(BYTES, "gif", { timeoutMs: 60_000, maxSeconds: 60 });
    while (!await Deno.stat(`${dir}/started`).then(() => true, () => false)) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(text(await ffmpeg.frame(BYTES, "mov")).trim(), "10");
    await Deno.writeTextFile(`${dir}/release`, "");
    assert.equal(text(await rendition).trim(), "19");
    // A caption's frame is a background run: the rendition's lane, at its priority.
    assert.equal(text(await ffmpeg.frame(BYTES, "mov", { background: true })).trim(), "19");
    assert.equal(ffmpeg.running, 0);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("inspect() starts the poster's run with the probe's, in one slot, from one file", async () => {
  // ffprobe answers only once ffmpeg has started (at most 3 s later it gives up, exit 4): one
  // after the other, the probe would fail. Each writes the input file it was given.
  const { dir, path } = await fakeFfmpeg(
    'D="$(/usr/bin/dirname "$0")"; for a; do case "$a" in file:*) f="$a";; esac; done; ' +
      'case "$0" in *ffprobe) i=0; while [ ! -e "$D/started" ]; do i=$((i+1)); ' +
      "[ $i -gt 60 ] && exit 4; /bin/sleep 0.05; done; " +
      `echo "$f" > "$D/probe-input"; echo '${PROBE_JSON}' ;; ` +
      '*) /bin/touch "$D/started"; echo "$f" > "$D/poster-input"; echo PNG ;; esac',
  );
  try {
    const ffmpeg = await Ffmpeg.open(options(path, { timeoutMs: 10_000 }));
    const { probe, poster } = await ffmpeg.inspect(BYTES, "mov", { maxSide: 400 });
    assert.deepEqual([probe.codec, probe.width, probe.height, probe.duration], ["h264", 64, 48, 2]);
    assert.equal(text(await poster).trim(), "PNG");
    const [a, b] = await Promise.all(
      ["probe-input", "poster-input"].map((f) => Deno.readTextFile(`${dir}/${f}`)),
    );
    assert.equal(a, b, "one copy of the bytes");
    // The slot and the file are released once both have ended.
    for (let i = 0; ffmpeg.running > 0 && i < 100; i++) await new Promise((r) => setTimeout(r));
    assert.equal(ffmpeg.running, 0);
    await assert.rejects(Deno.stat(a.trim().slice("file:".length)), Deno.errors.NotFound);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Stand-ins that log each process as it starts (`started`: pid, name, arguments) and once it has
 * read its standard input to the end (`fed`: pid), keeping what they read (`in-<pid>`).
 */
const LOGGING_FFMPEG = 'D="$(/usr/bin/dirname "$0")"; ' +
  'echo "$$ $(/usr/bin/basename "$0") $*" >> "$D/started"; /bin/cat > "$D/in-$$"; ' +
  'echo "$$" >> "$D/fed"; ' +
  `case "$0" in *ffprobe) echo '${PROBE_JSON}' ;; *) echo PNG ;; esac`;

const lines = async (file: string) =>
  (await Deno.readTextFile(file).catch(() => "")).trim().split("\n").filter((l) => l !== "");

/** Waits (hang guard 10 s) until `file` has at least `n` lines; its lines. */
async function atLeast(file: string, n: number): Promise<string[]> {
  await until(`${n} lines in ${file}`, async () => (await lines(file)).length >= n, 10_000, 20);
  return await lines(file);
}

/** The pid of a line of LOGGING_FFMPEG's `started` log. */
const pid = (line: string) => line.split(" ")[0];

/**
 * The lines of `started` (once it has at least `n`) of runs never fed: those started ahead and
 * still waiting (or killed waiting). Told apart by being fed, not by order: a run started ahead
 * once the probe ended may log its start before the poster's run does.
 */
async function unfed(dir: string, n: number): Promise<string[]> {
  const started = await atLeast(`${dir}/started`, n);
  const fed = await lines(`${dir}/fed`);
  return started.filter((l) => !fed.includes(pid(l)));
}

const alive = (pid: string) => Deno.stat(`/proc/${pid}`).then(() => true, () => false);

/** Waits (hang guard 10 s) until process `pid` has ended. */
const ended = (pid: string) => until(`${pid} to end`, async () => !await alive(pid), 10_000, 20);

Deno.test("inspect() of a streamable video: runs started ahead read it through a pipe only", async () => {
  const { dir, path } = await fakeFfmpeg(LOGGING_FFMPEG);
  const ffmpeg = await Ffmpeg.open(options(path));
  try {
    const inspect = async () => {
      const { probe, poster } = await ffmpeg.inspect(BYTES, "mov", {
        maxSide: 400,
        streamable: true,
      });
      assert.deepEqual([probe.codec, probe.width, probe.height], ["h264", 64, 48]);
      assert.equal(text(await poster).trim(), "PNG");
    };
    // The first upload starts its two runs itself; both are given the bytes on standard input,
    // with no file to open and no protocol but the pipe.
    await inspect();
    const fedFirst = await lines(`${dir}/fed`);
    const first = (await lines(`${dir}/started`)).filter((l) => fedFirst.includes(pid(l)));
    assert.equal(first.length, 2);
    for (const line of first) {
      assert.match(line, / -protocol_whitelist pipe -f mov -i pipe:0 /);
      assert.ok(!line.includes("file:"), line);
      assert.deepEqual(await Deno.readFile(`${dir}/in-${line.split(" ")[0]}`), BYTES);
    }
    assert.match(first.find((l) => l.includes(" ffmpeg "))!, / -skip_frame nokey /);
    // Then one of each is started ahead, waiting for the next upload, which they read.
    const ahead = await unfed(dir, 4);
    const command = (l: string) => l.split(" ").slice(1).join(" ");
    assert.deepEqual(ahead.map(command).sort(), first.map(command).sort());
    const aheadPids = ahead.map(pid);
    assert.ok(!(await lines(`${dir}/fed`)).some((p) => aheadPids.includes(p)), "not fed yet");
    await inspect();
    const fed = await lines(`${dir}/fed`);
    assert.deepEqual(fed.slice(2).sort(), [...aheadPids].sort(), "the second upload's runs");
    // One that has died meanwhile is not used: its run is started anew.
    const next = (await unfed(dir, 6)).map(pid);
    Deno.kill(Number(next[0]), "SIGKILL");
    await ended(next[0]);
    await inspect();
    assert.ok(!(await lines(`${dir}/fed`)).includes(next[0]));
    // close() stops the ones waiting.
    const waiting = (await unfed(dir, 9)).map(pid).filter((p) => p !== next[0]);
    assert.equal(waiting.length, 2, "one of each waiting");
    await ffmpeg.close();
    for (const pid of waiting) assert.equal(await alive(pid), false, `${pid} still runs`);
  } finally {
    await ffmpeg.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a run that cannot be started ahead is left to the next upload, which starts its own", async () => {
  // Each stand-in removes itself once it has run: the processes to start ahead are not there.
  const { dir, path } = await fakeFfmpeg(`${LOGGING_FFMPEG}; /bin/rm -f "$0"`);
  const copies = await Promise.all(
    ["ffmpeg", "ffprobe"].map(async (n) => [n, await Deno.readTextFile(`${dir}/${n}`)] as const),
  );
  // No nice or prlimit before the binary: starting it is what fails (NotFound), not the exec.
  const ffmpeg = await Ffmpeg.open(options(path, { nicePath: null, prlimitPath: null }));
  try {
    const { poster } = await ffmpeg.inspect(BYTES, "mov", { streamable: true });
    assert.equal(text(await poster).trim(), "PNG");
    // The service goes on (no unhandled rejection), and with FFmpeg back the next upload works.
    await sleep(50);
    for (const [n, body] of copies) await Deno.writeTextFile(`${dir}/${n}`, body, { mode: 0o755 });
    const again = await ffmpeg.inspect(BYTES, "mov", { streamable: true });
    assert.equal(again.probe.codec, "h264");
    assert.equal(text(await again.poster).trim(), "PNG");
  } finally {
    await ffmpeg.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runs started ahead stop after standbyIdleMs without an upload", async () => {
  const { dir, path } = await fakeFfmpeg(LOGGING_FFMPEG);
  const ffmpeg = await Ffmpeg.open(options(path, { standbyIdleMs: 200 }));
  try {
    const { poster } = await ffmpeg.inspect(BYTES, "webm", { streamable: true });
    await poster;
    const ahead = (await unfed(dir, 4)).map(pid);
    for (const pid of ahead) await ended(pid);
    // None is started again until the next upload.
    assert.equal((await lines(`${dir}/started`)).length, 4);
  } finally {
    await ffmpeg.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("inspect(): a failed probe stops the poster's run and frees the slot", async () => {
  // ffprobe fails at once; the poster's ffmpeg would run for 30 s.
  const { dir, path } = await fakeFfmpeg(
    'case "$0" in *ffprobe) echo "Invalid data found" >&2; exit 1 ;; *) /bin/sleep 30 ;; esac',
  );
  try {
    const ffmpeg = await Ffmpeg.open(options(path, { timeoutMs: 60_000 }));
    const started = performance.now();
    const inspected = ffmpeg.inspect(BYTES, "mov");
    await assert.rejects(inspected, { name: "FfmpegRunError" });
    // The poster's run was killed, not waited for: the slot is free long before its 30 s (a
    // hang guard of 10 s; it takes milliseconds).
    while (ffmpeg.running > 0) {
      assert.ok(performance.now() - started < 10_000, "the poster's run was not stopped");
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a failing run is FfmpegRunError with FFmpeg's last line", async () => {
  const { dir, path } = await fakeFfmpeg(
    'echo "noise" >&2; echo "moov atom not found" >&2; exit 1',
  );
  try {
    const ffmpeg = await Ffmpeg.open(options(path));
    await assert.rejects(ffmpeg.frame(BYTES, "mov"), {
      name: "FfmpegRunError",
      message: "FFmpeg could not read the video: moov atom not found",
    });
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("FFmpeg missing is FfmpegMissingError naming what to install", async () => {
  await assert.rejects(Ffmpeg.open(options("/nowhere/ffmpeg")), (err: Error) => {
    assert.ok(err instanceof FfmpegMissingError);
    assert.match(err.message, /^\/nowhere\/ffmpeg is not there: install FFmpeg \(Debian: apt-get/);
    return true;
  });
});

Deno.test("Debian's FFmpeg never follows a playlist dressed as an MP4 to the network", async () => {
  let requests = 0;
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, () => {
    requests++;
    return new Response("x");
  });
  try {
    const url = `http://127.0.0.1:${server.addr.port}/x.ts`;
    const playlist = new TextEncoder().encode(
      `\0\0\0\x14ftypisom\0\0\x02\0isom#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\n${url}\n`,
    );
    const ffmpeg = await Ffmpeg.open(options("/usr/bin/ffmpeg"));
    await assert.rejects(ffmpeg.probe(playlist, "mov"), FfmpegRunError);
    await assert.rejects(ffmpeg.frame(playlist, "mov"), FfmpegRunError);
    assert.equal(requests, 0);
  } finally {
    await server.shutdown();
  }
});

Deno.test("parseProbe() takes the first video stream and the container's duration", () => {
  assert.deepEqual(
    parseProbe(JSON.stringify({
      streams: [
        { codec_type: "audio", codec_name: "aac" },
        { codec_type: "video", codec_name: "h264", width: 640, height: 360, duration: "9.9" },
      ],
      format: { duration: "10.000000" },
    })),
    { codec: "h264", width: 640, height: 360, duration: 10, audio: true },
  );
  // A display rotation of a quarter turn swaps the displayed sizes; a half turn does not.
  const rotated = (side: object[], tags: object = {}) =>
    parseProbe(JSON.stringify({
      streams: [{
        codec_type: "video",
        codec_name: "h264",
        width: 1920,
        height: 1080,
        tags,
        side_data_list: side,
      }],
      format: { duration: "3" },
    }));
  assert.deepEqual([rotated([{ rotation: -90 }]).width, rotated([{ rotation: -90 }]).height], [
    1080,
    1920,
  ]);
  assert.equal(rotated([{ rotation: 270 }]).width, 1080);
  assert.equal(rotated([{ rotation: 180 }]).width, 1920);
  assert.equal(rotated([], { rotate: "90" }).width, 1080, "the older rotate tag");
  assert.equal(rotated([]).width, 1920);
  assert.throws(
    () => parseProbe(JSON.stringify({ streams: [{ codec_type: "audio" }], format: {} })),
    { message: "The file has no video stream" },
  );
  assert.throws(() => parseProbe("nope"), FfmpegRunError);
});
