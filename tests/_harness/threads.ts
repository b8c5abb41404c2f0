/** Processes and their threads, as Linux lists them in /proc. */

/**
 * The fields of a /proc `stat` line after the command name, the state (field 3) first: the name is
 * in parentheses and may hold spaces and parentheses itself, so it ends at the last `)`.
 */
export function statFields(stat: string): string[] {
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/**
 * The CPU time (user + system) a /proc `stat` line counts, in ms: its fields 14 and 15, in clock
 * ticks of 10 ms (100 per second).
 */
export function statCpuMs(stat: string): number {
  const fields = statFields(stat);
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The threads of process `pid` with their names and nice values, from /proc. A thread that ends
 * between the listing and the reading of its stat is left out.
 */
export function threadNices(pid: number): { tid: number; name: string; nice: number }[] {
  return [...Deno.readDirSync(`/proc/${pid}/task`)].flatMap(({ name: tid }) => {
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${pid}/task/${tid}/stat`);
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return [];
      throw e;
    }
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    return [{ tid: Number(tid), name, nice: Number(statFields(stat)[16]) }];
  });
}

/** Linux's capability number of CAP_SYS_NICE. */
const CAP_SYS_NICE = 23n;

/**
 * Whether process `pid` may lower a thread's nice value to `nice` (below 0): with CAP_SYS_NICE in
 * its effective set, or an RLIMIT_NICE of at least 20 - `nice` (setpriority(2)). What root has,
 * and what an unprivileged user without a raised limit lacks.
 */
export function mayLowerNice(pid: number | "self", nice: number): boolean {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  const eff = BigInt(`0x${/^CapEff:\s+([0-9a-f]+)$/m.exec(status)![1]}`);
  if ((eff >> CAP_SYS_NICE) & 1n) return true;
  const limits = Deno.readTextFileSync(`/proc/${pid}/limits`);
  const soft = /^Max nice priority\s+(\S+)/m.exec(limits)![1];
  return soft === "unlimited" || Number(soft) >= 20 - nice;
}
