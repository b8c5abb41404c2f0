/**
 * Debian's nginx for tests: docs/deployment.md's nginx block, as an operator would copy it,
 * pointed at the test's replicas and run from a temporary prefix on a free loopback port.
 */
import { type Child, hostEnv, ROOT, spawnChild, waitReady } from "./child.ts";

/**
 * nginx's own address towards the replicas (`proxy_bind`): no client connects from it, as with a
 * proxy on a host of its own, so the replicas can tell nginx from the clients behind it.
 */
export const NGINX_ADDRESS = "127.0.0.2";

/** docs/deployment.md's nginx block: its first `nginx` code fence. */
export async function readmeNginxBlock(): Promise<string> {
  const doc = await Deno.readTextFile(`${ROOT}docs/deployment.md`);
  const block = /^```nginx\n([\s\S]*?)^```$/m.exec(doc)?.[1];
  if (!block) throw new Error("docs/deployment.md has no ```nginx block");
  return block;
}

/**
 * `block` with its upstream servers replaced, in order, by `upstreams` (host:port) and its
 * `listen` by `port` on loopback. Throws when the block has another shape than that, so that the
 * documented block cannot drift from what the test runs.
 */
export function pointBlockAt(block: string, upstreams: string[], port: number): string {
  // `server host:port params;` lines (an upstream's), not `server {` (a virtual server).
  const server = /^([ \t]*server[ \t]+)[^\s;{]+([^;{\n]*;)$/gm;
  const found = block.match(server)?.length ?? 0;
  if (found !== upstreams.length) {
    throw new Error(`the documented upstream lists ${found} servers, not ${upstreams.length}`);
  }
  let i = 0;
  const out = block.replace(server, (_, head, params) => head + upstreams[i++] + params);
  const listen = /^([ \t]*listen[ \t]+)\S+;$/gm;
  const listens = out.match(listen)?.length ?? 0;
  if (listens !== 1) throw new Error(`the documented block has ${listens} listen lines, not 1`);
  return out.replace(listen, (_, head) => `${head}127.0.0.1:${port};`);
}

/** The nginx executable, or a message saying how to install it. */
async function nginxPath(): Promise<string> {
  const dirs = [...(Deno.env.get("PATH") ?? "").split(":"), "/usr/sbin", "/sbin"];
  for (const dir of dirs.filter(Boolean)) {
    const path = `${dir}/nginx`;
    if (await Deno.stat(path).then((s) => s.isFile, () => false)) return path;
  }
  throw new Error(
    "nginx is not installed: apt-get install nginx (tests/reliability/replicas_test.ts)",
  );
}

/** A running nginx. */
export interface TestNginx {
  port: number;
  base: string;
  child: Child;
  /** Stops nginx and removes its prefix. */
  stop(): Promise<void>;
}

/**
 * Starts nginx with `block` (an http-level configuration: upstreams and servers) from a
 * temporary prefix, errors to its stderr, and waits until `readyPath` answers 200 through it.
 */
export async function startNginx(
  block: string,
  port: number,
  readyPath: string,
): Promise<TestNginx> {
  const command = await nginxPath();
  const dir = await Deno.makeTempDir({ prefix: "board-nginx-" });
  // As root, nginx's workers run as nobody and must reach the temporary paths below.
  await Deno.chmod(dir, 0o755);
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `  ${t}_temp_path ${dir}/${t};`).join("\n");
  await Deno.writeTextFile(
    `${dir}/nginx.conf`,
    `pid ${dir}/nginx.pid;
error_log stderr warn;
worker_processes 1;
events { worker_connections 512; }
http {
  access_log off;
${temp}
  proxy_bind ${NGINX_ADDRESS};
${block}
}
`,
  );
  const child = spawnChild({
    command,
    args: ["-p", dir, "-c", `${dir}/nginx.conf`, "-e", "stderr", "-g", "daemon off;"],
    env: hostEnv(),
  });
  const base = `http://127.0.0.1:${port}`;
  const stop = async () => {
    await child.stop(5_000);
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  try {
    await waitReady(child, `${base}${readyPath}`, { timeoutMs: 30_000 });
  } catch (e) {
    await stop();
    throw e;
  }
  return { port, base, child, stop };
}

/**
 * Connections nginx has open to the replica on `port` (ESTABLISHED, from NGINX_ADDRESS). nginx
 * opens one per request and closes it after the answer, so each is a request in flight, whether
 * the replica has accepted it yet or not.
 */
export async function connectionsTo(port: number): Promise<number> {
  const table = await Deno.readTextFile("/proc/net/tcp");
  // The kernel prints an IPv4 address as one little-endian hex number.
  const from = NGINX_ADDRESS.split(".").reverse()
    .map((o) => Number(o).toString(16).padStart(2, "0")).join("").toUpperCase();
  const to = port.toString(16).toUpperCase().padStart(4, "0");
  return table.split("\n").filter((line) => {
    const [, local, remote, state] = line.trim().split(/\s+/);
    return state === "01" && local?.startsWith(`${from}:`) && remote?.endsWith(`:${to}`);
  }).length;
}
