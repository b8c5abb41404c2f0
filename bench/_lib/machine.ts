/**
 * Readings of this machine and its processes from /proc: CPU jiffies (busy and stolen), waiting
 * for a quiet machine, a process's memory and CPU time.
 *
 * @module
 */
import { statCpuMs, statFields } from "../../tests/_harness/threads.ts";

/**
 * CPU jiffies of the whole machine so far (/proc/stat): busy (this machine's own work), steal
 * (time the hypervisor gave to other guests while this one wanted to run) and the total.
 */
export async function machineJiffies(): Promise<{ busy: number; steal: number; total: number }> {
  const line = (await Deno.readTextFile("/proc/stat")).split("\n")[0];
  // user nice system idle iowait irq softirq steal (guest time is already counted in user)
  const [user, nice, system, idle, iowait, irq, softirq, steal = 0] = line.trim().split(/\s+/)
    .slice(1).map(Number);
  const busy = user + nice + system + irq + softirq;
  return { busy, steal, total: busy + idle + iowait + steal };
}

/**
 * Waits until the machine has been nearly idle (under 15% busy) for half a second, at most
 * `maxMs`; returns how long it waited. What the previous benchmark left running (a database
 * dropped with its checkpoint, children still exiting) otherwise lands in the next one's
 * figures: B7's reader once took 376 ms right after B6 and 230 ms on a quiet machine. Steal is
 * not this machine's work, so it does not count as busy.
 */
export async function settle(maxMs = 20_000): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < maxMs) {
    const a = await machineJiffies();
    await new Promise((r) => setTimeout(r, 500));
    const b = await machineJiffies();
    if ((b.busy - a.busy) / Math.max(1, b.total - a.total) < 0.15) break;
  }
  return performance.now() - t0;
}

/** Resident memory of a process in KiB (VmRSS) and its peak (VmHWM), from /proc. */
export async function memoryKb(pid: number): Promise<{ rss: number; hwm: number }> {
  const text = await Deno.readTextFile(`/proc/${pid}/status`);
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, "m").exec(text)?.[1]);
  return { rss: field("VmRSS"), hwm: field("VmHWM") };
}

/** CPU time (user + system) a process has used so far, in ms (from /proc/<pid>/stat). */
export async function cpuMs(pid: number): Promise<number> {
  return statCpuMs(await Deno.readTextFile(`/proc/${pid}/stat`));
}

/** One process of a tree: its id, its command name and its resident memory (KiB). */
export interface TreeProcess {
  pid: number;
  name: string;
  rssKb: number;
}

/**
 * `pid` and every process descending from it (children, their children...), each with its
 * resident memory, from /proc; a process that exits while it is read is left out.
 */
export async function processTree(pid: number): Promise<TreeProcess[]> {
  const parents = new Map<number, number[]>();
  for await (const entry of Deno.readDir("/proc")) {
    if (!/^\d+$/.test(entry.name)) continue;
    const stat = await Deno.readTextFile(`/proc/${entry.name}/stat`).catch(() => null);
    if (!stat) continue;
    const ppid = Number(statFields(stat)[1]); // field 4 of the whole line: the parent's id
    parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry.name)]);
  }
  const out: TreeProcess[] = [];
  for (const queue = [pid]; queue.length > 0;) {
    const p = queue.shift()!;
    const status = await Deno.readTextFile(`/proc/${p}/status`).catch(() => null);
    if (!status) continue;
    const name = /^Name:\s+(.*)$/m.exec(status)?.[1] ?? "?";
    // A zombie has no VmRSS line: it holds no memory.
    const rssKb = Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
    out.push({ pid: p, name, rssKb });
    queue.push(...(parents.get(p) ?? []));
  }
  return out;
}
