/** A TCP proxy in front of PostgreSQL that can lose the reply to a commit. */
import { te } from "./bytes.ts";

/**
 * A TCP proxy in front of PostgreSQL that can cut the connection right after the server has
 * committed: `dropCommitReply(n)` makes it close the connection instead of forwarding the n-th
 * CommandComplete "COMMIT" that follows, so the client never learns that its commit succeeded.
 */
export function startPgProxy(target: { hostname: string; port: number }) {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  let dropAt = 0;
  let commits = 0;
  let dropped = 0;
  const conns = new Set<Deno.Conn>();
  const COMMIT = te("COMMIT\0");
  const hasCommit = (b: Uint8Array) => {
    outer: for (let i = 0; i + COMMIT.length <= b.length; i++) {
      for (let j = 0; j < COMMIT.length; j++) if (b[i + j] !== COMMIT[j]) continue outer;
      return true;
    }
    return false;
  };
  const pipe = async (from: Deno.Conn, to: Deno.Conn, watch: boolean) => {
    const buf = new Uint8Array(64 * 1024);
    try {
      for (;;) {
        const n = await from.read(buf);
        if (n === null) break;
        const chunk = buf.subarray(0, n);
        if (watch && dropAt > 0 && hasCommit(chunk) && ++commits === dropAt) {
          dropAt = 0;
          dropped++;
          break; // the server committed; the client never hears of it
        }
        let off = 0;
        while (off < n) off += await to.write(chunk.subarray(off));
      }
    } catch { /* either side went away */ }
    for (const c of [from, to]) {
      try {
        c.close();
      } catch { /* closed already */ }
      conns.delete(c);
    }
  };
  (async () => {
    for await (const client of listener) {
      const server = await Deno.connect(target).catch(() => null);
      if (!server) {
        client.close();
        continue;
      }
      conns.add(client);
      conns.add(server);
      pipe(client, server, false);
      pipe(server, client, true);
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    dropCommitReply(n: number) {
      commits = 0;
      dropAt = n;
    },
    get dropped() {
      return dropped;
    },
    close() {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed already */ }
      }
    },
  };
}
