/** The threads of a process, as Linux lists them. */

/** The threads of process `pid` with their names and nice values, from /proc. */
export function threadNices(pid: number): { tid: number; name: string; nice: number }[] {
  return [...Deno.readDirSync(`/proc/${pid}/task`)].map(({ name: tid }) => {
    const stat = Deno.readTextFileSync(`/proc/${pid}/task/${tid}/stat`);
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return { tid: Number(tid), name, nice: Number(fields[16]) };
  });
}
