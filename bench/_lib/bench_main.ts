/**
 * The main of every benchmark: a quiet machine first, then the parts, the report and a clean
 * exit.
 *
 * @module
 */
import { machineJiffies, settle } from "./machine.ts";
import { stopAllChildren } from "./processes.ts";
import { ms, report, type Row } from "./results.ts";

/**
 * Runs `fn` as a benchmark main: waits for a quiet machine, then timing, report, and a clean
 * exit (children are killed).
 */
export async function benchMain(
  id: string,
  title: string,
  fn: (notes: string[]) => Promise<Row[]>,
): Promise<void> {
  const notes: string[] = [];
  const waited = await settle();
  if (waited > 1000) notes.push(`waited ${ms(waited)} for the machine to settle first`);
  const started = performance.now();
  const before = await machineJiffies();
  let rows: Row[] = [];
  try {
    rows = await fn(notes);
  } catch (e) {
    notes.push(`FAILED: ${(e as Error)?.stack ?? e}`);
    console.error(e);
  } finally {
    await stopAllChildren();
  }
  const seconds = (performance.now() - started) / 1000;
  const after = await machineJiffies();
  const stolen = (after.steal - before.steal) / Math.max(1, after.total - before.total);
  notes.push(
    `CPU steal during this benchmark: ${(100 * stolen).toFixed(0)}% of the machine's CPU time ` +
      `went to other guests of the host (/proc/stat), time these figures could not use`,
  );
  await report({ id, title, rows, notes, seconds });
  Deno.exit(0);
}

/**
 * The rows of a benchmark made of named parts (`--name` runs that one only); a part that fails
 * is reported in the notes and the others still run.
 */
export async function runParts(
  notes: string[],
  parts: Record<string, (notes: string[]) => Promise<Row[]>>,
): Promise<Row[]> {
  const only = Deno.args.find((a) => a.startsWith("--") && a.slice(2) in parts)?.slice(2);
  const rows: Row[] = [];
  for (const [name, part] of Object.entries(parts)) {
    if (only && only !== name) continue;
    try {
      rows.push(...await part(notes));
    } catch (e) {
      notes.push(`FAILED (--${name}): ${(e as Error)?.stack ?? e}`);
    }
  }
  return rows;
}
