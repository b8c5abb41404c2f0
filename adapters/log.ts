/**
 * Structured JSON logs, one object per line on stdout/stderr. A logger carries fields (such as
 * the request id) that appear on every line it writes.
 */

/** Severity levels, lowest first. */
export type LogLevel = "debug" | "info" | "warn" | "error";

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Where lines go; tests swap it to capture output. */
export type LogSink = (line: string, level: LogLevel) => void;

const defaultSink: LogSink = (line, level) => {
  if (level === "error" || level === "warn") console.error(line);
  else console.log(line);
};

/** A JSON line logger with bound fields. */
export class Logger {
  constructor(
    readonly level: LogLevel = "info",
    private readonly fields: Record<string, unknown> = {},
    private readonly sink: LogSink = defaultSink,
  ) {}

  /** A logger whose lines also carry `fields` (for example `{ request_id }`). */
  child(fields: Record<string, unknown>): Logger {
    return new Logger(this.level, { ...this.fields, ...fields }, this.sink);
  }

  debug(msg: string, fields?: Record<string, unknown>): void {
    this.write("debug", msg, fields);
  }
  info(msg: string, fields?: Record<string, unknown>): void {
    this.write("info", msg, fields);
  }
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.write("warn", msg, fields);
  }
  error(msg: string, fields?: Record<string, unknown>): void {
    this.write("error", msg, fields);
  }

  private write(level: LogLevel, msg: string, extra?: Record<string, unknown>): void {
    if (RANK[level] < RANK[this.level]) return;
    const line = { time: new Date().toISOString(), level, msg, ...this.fields, ...extra };
    this.sink(JSON.stringify(line, replaceErrors), level);
  }
}

function replaceErrors(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    // `code`: a PostgreSQL SQLSTATE, a driver's or the system's error code, for the operator.
    const { code } = value as { code?: unknown };
    return { name: value.name, message: value.message, code, stack: value.stack };
  }
  return value;
}

/** A logger that collects its lines in memory, for tests that assert on log output. */
export function captureLogger(level: LogLevel = "debug"): { log: Logger; lines: string[] } {
  const lines: string[] = [];
  return { log: new Logger(level, {}, (line) => lines.push(line)), lines };
}
