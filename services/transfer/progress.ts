/**
 * Progress and the closing summary of a transfer. On a terminal: one bar on standard error,
 * redrawn at most ten times a second, with outcomes worth reading (skips, failures) printed above
 * it. Otherwise (a pipe, a log file, CI): one plain line per file on standard output and a
 * progress line at every tenth of the work, so a log shows where a long run got to.
 *
 * The summary keeps at most MAX_LISTED paths per outcome, so memory stays flat however large
 * the collection is; the rest are counted ("... and N more").
 */

/** Paths kept per outcome for the summary. */
export const MAX_LISTED = 1000;

/** Counters of a run; `files` and `bytes` are the totals, null while unknown. */
export interface ProgressState {
  files: number | null;
  bytes: number | null;
  doneFiles: number;
  doneBytes: number;
  failed: number;
  startedMs: number;
}

/** Human-readable bytes: "1.5 MB", "320 kB" (decimal units). */
export function formatBytes(n: number): string {
  if (n < 1000) return `${n} B`;
  const units = ["kB", "MB", "GB", "TB"];
  let v = n;
  let u = -1;
  while (v >= 1000 && u < units.length - 1) {
    v /= 1000;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

/** A duration as 1h02m, 3m05s or 12s. */
export function formatDuration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s >= 3600) {
    return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, "0")}m`;
  }
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
  return `${s}s`;
}

/** The figures of a progress line: done/total files, bytes, rate, ETA, failures. */
export function progressFigures(p: ProgressState, nowMs: number, noun = "files"): string {
  const seconds = Math.max(0.001, (nowMs - p.startedMs) / 1000);
  const rate = p.doneFiles / seconds;
  const parts = [
    p.files === null ? `${p.doneFiles} ${noun}` : `${p.doneFiles}/${p.files} ${noun}`,
    p.bytes === null
      ? formatBytes(p.doneBytes)
      : `${formatBytes(p.doneBytes)}/${formatBytes(p.bytes)}`,
    `${rate.toFixed(1)} ${noun}/s`,
  ];
  if (p.files !== null && p.doneFiles > 0 && p.doneFiles < p.files) {
    // Bytes say more about what is left than files do when sizes vary.
    const byBytes = p.bytes && p.doneBytes > 0 ? (p.bytes - p.doneBytes) / p.doneBytes : null;
    const left = byBytes ?? (p.files - p.doneFiles) / p.doneFiles;
    parts.push(`ETA ${formatDuration(seconds * left)}`);
  }
  parts.push(`${p.failed} failed`);
  return parts.join(" · ");
}

/**
 * A terminal bar, `[#####-----]  40% ` and the figures, fitted to `columns`: the bar takes what
 * the figures leave (10 to 30 characters).
 */
export function renderBar(p: ProgressState, nowMs: number, columns = 100, noun = "files"): string {
  const figures = progressFigures(p, nowMs, noun);
  const width = Math.max(10, Math.min(30, columns - figures.length - 9));
  const fraction = p.files ? Math.min(1, p.doneFiles / p.files) : 0;
  const filled = Math.round(fraction * width);
  const bar = `[${"#".repeat(filled)}${"-".repeat(width - filled)}]`;
  return `${bar} ${String(Math.floor(fraction * 100)).padStart(3)}% ${figures}`;
}

/** Where the output goes: a terminal's stderr gets the bar; stdout gets plain lines. */
export interface ProgressSink {
  /** True: draw a bar (stderr is a terminal). */
  tty: boolean;
  out(line: string): void;
  /** Replace the bar on a terminal. */
  bar(text: string): void;
  /** The terminal's width, when known. */
  columns?(): number;
}

const encoder = new TextEncoder();

/**
 * What a terminal acts on instead of showing: C0 and C1 control characters (escape sequences,
 * bells, carriage returns, new lines) and the bidirectional overrides that reorder what is shown.
 */
// deno-lint-ignore no-control-regex
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/**
 * `text` with every character a terminal would act on replaced by `?`: names and messages from a
 * board or a folder are printed, and must not move the cursor, retitle the window or fake a line
 * (export_test.ts "a hostile board's listing ...").
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, "?");
}

/**
 * The process's own sink: the bar (on stderr) when both outputs are a terminal; plain lines
 * when either is redirected (`deno task import x > import.log` keeps every line).
 */
export function consoleSink(): ProgressSink {
  const tty = Deno.stdout.isTerminal() && Deno.stderr.isTerminal();
  const columns = () => {
    try {
      return Deno.consoleSize().columns || 100;
    } catch {
      return 100;
    }
  };
  let drawn = false;
  return {
    tty,
    out(line) {
      if (tty && drawn) Deno.stderr.writeSync(encoder.encode("\r\x1b[2K"));
      drawn = false;
      console.log(printable(line));
    },
    bar(text) {
      Deno.stderr.writeSync(
        encoder.encode(`\r\x1b[2K${printable(text).slice(0, columns() - 1)}`),
      );
      drawn = true;
    },
    columns,
  };
}

/** The outcome kinds of a run, in summary order, with their headings. */
export type Outcome = string;

/** Counts and (up to MAX_LISTED) paths per outcome, and the progress display. */
export class Progress {
  readonly state: ProgressState;
  readonly counts = new Map<Outcome, number>();
  readonly listed = new Map<Outcome, string[]>();
  #lastDraw = 0;
  #lastPlain = 0;

  constructor(readonly sink: ProgressSink, readonly noun = "files", now = performance.now()) {
    this.state = {
      files: null,
      bytes: null,
      doneFiles: 0,
      doneBytes: 0,
      failed: 0,
      startedMs: now,
    };
  }

  /** Sets the totals once they are known. */
  setTotals(files: number, bytes: number): void {
    this.state.files = files;
    this.state.bytes = bytes;
  }

  /**
   * Records one item's outcome: `line` is printed plainly (always off a terminal; on a terminal
   * only when `loud`, e.g. failures), then the bar or plain progress is brought up to date.
   */
  record(
    outcome: Outcome,
    entry: string,
    line: string,
    bytes: number,
    opts: { loud?: boolean; failed?: boolean } = {},
  ) {
    this.counts.set(outcome, (this.counts.get(outcome) ?? 0) + 1);
    const list = this.listed.get(outcome) ?? [];
    if (list.length < MAX_LISTED) list.push(entry);
    this.listed.set(outcome, list);
    const s = this.state;
    s.doneFiles++;
    s.doneBytes += bytes;
    if (opts.failed) s.failed++;
    if (!this.sink.tty || opts.loud) this.sink.out(line);
    this.tick();
  }

  /** Redraws the bar (throttled) or prints a plain progress line at each tenth of the work. */
  tick(now = performance.now()): void {
    const s = this.state;
    if (this.sink.tty) {
      if (now - this.#lastDraw < 100 && s.doneFiles !== s.files) return;
      this.#lastDraw = now;
      this.sink.bar(renderBar(s, now, this.sink.columns?.() ?? 100, this.noun));
      return;
    }
    if (s.files === null || s.files === 0 || s.doneFiles === this.#lastPlain) return;
    const step = Math.max(1, Math.ceil(s.files / 10));
    if (s.doneFiles >= this.#lastPlain + step || s.doneFiles === s.files) {
      this.#lastPlain = s.doneFiles;
      this.sink.out(`progress ${progressFigures(s, now, this.noun)}`);
    }
  }

  /** The count of `outcome`. */
  count(outcome: Outcome): number {
    return this.counts.get(outcome) ?? 0;
  }

  /** The summary: one line of counts, then each outcome's paths under its heading. */
  summary(headings: [Outcome, string][]): string[] {
    const lines = [
      `Summary: ${headings.map(([o, h]) => `${this.count(o)} ${h}`).join(", ")} in ${
        formatDuration((performance.now() - this.state.startedMs) / 1000)
      }`,
    ];
    for (const [outcome, heading] of headings) {
      const n = this.count(outcome);
      if (n === 0) continue;
      lines.push(`${heading} (${n}):`);
      for (const entry of this.listed.get(outcome) ?? []) lines.push(`  ${entry}`);
      if (n > MAX_LISTED) lines.push(`  ... and ${n - MAX_LISTED} more`);
    }
    return lines;
  }
}
