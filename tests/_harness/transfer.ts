/**
 * The import and export tools under test: a service served over real HTTP on loopback, the tools
 * run as `deno task` would run them (the task's own permissions), and the board's whole listing.
 */
import { TEST_PASSWORD, type TestService } from "./app.ts";
import { hostEnv, ROOT, spawnChild } from "./child.ts";
import type { ImageDto, ImagePage } from "../../domain/types.ts";

/** A test service listening on a loopback port. */
export function serveOverHttp(svc: TestService): { base: string; close(): Promise<void> } {
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, svc.app.fetch);
  return {
    base: `http://127.0.0.1:${server.addr.port}`,
    close: () => server.shutdown(),
  };
}

/** The arguments of `deno task <name>` as deno.json defines it, without `deno`. */
export async function taskArgs(name: "import" | "export"): Promise<string[]> {
  const { tasks } = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  return String(tasks[name]).split(" ").slice(1);
}

/** The outcome of a tool run. */
export interface ToolRun {
  code: number;
  signal: string | null;
  stdout: string;
  output: string;
}

/**
 * Runs `deno task <name>` with `args`, the test password in the environment and stdin closed
 * (so its output is the non-terminal form); `onLine` sees each line (and may kill it).
 */
export async function runTool(
  name: "import" | "export",
  args: string[],
  opts: {
    onLine?: (line: string, kill: (signal?: Deno.Signal) => void) => void;
    env?: Record<string, string>;
  } = {},
): Promise<ToolRun> {
  let kill: (signal?: Deno.Signal) => void = () => {};
  const child = spawnChild({
    args: [...await taskArgs(name), ...args],
    env: { ...hostEnv(), IMAGEBOARD_PASSWORD: TEST_PASSWORD, ...opts.env },
    onLine: opts.onLine ? (line) => opts.onLine!(line, kill) : undefined,
  });
  kill = (signal = "SIGKILL") => child.kill(signal);
  const timer = setTimeout(() => child.kill("SIGKILL"), 120_000);
  try {
    const status = await child.status;
    return {
      code: status.code,
      signal: status.signal,
      stdout: child.stdout(),
      output: child.output(),
    };
  } finally {
    clearTimeout(timer);
  }
}

/** Every image of a board, newest first, through its public listing. */
export async function listAll(base: string): Promise<ImageDto[]> {
  const all: ImageDto[] = [];
  let cursor: string | null = null;
  do {
    const res: Response = await fetch(
      `${base}/api/v1/images?limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    const page: ImagePage = await res.json();
    all.push(...page.items);
    cursor = page.next_cursor;
  } while (cursor);
  return all;
}

/** The fields of an image that a move between boards must keep. */
export function essentials(img: ImageDto) {
  return {
    short_id: img.short_id,
    hash: img.hash,
    content_type: img.content_type,
    size_bytes: img.size_bytes,
    width: img.width,
    height: img.height,
    tags: img.tags.map((t) => t.name),
    created_at: img.created_at,
    text: img.text,
    text_source: img.text_source,
    uploaded_by: img.uploaded_by,
  };
}
