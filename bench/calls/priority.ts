/**
 * @module Scheduling priorities the roles benchmark gives the process answering the API and the
 * clients measuring it: a nice value (what an operator sharing a machine could set), or
 * `realtime` (SCHED_FIFO on every thread, by chrt): not a setting to deploy, but the nearest this
 * machine comes to giving them a core of their own, so the wait for a core drops out of the figure.
 */
import { execFileSync } from 'node:child_process';
import { setPriority } from 'node:os';

export type SchedulingPriority = number | 'realtime';

/** BENCH_CALLS_API_PRIORITY: unset, `realtime`, or a nice value (-20 to 19; below 0 needs root). */
export function parsePriority(text: string | undefined): SchedulingPriority | undefined {
  if (text === undefined || text === '') return undefined;
  if (text === 'realtime') return 'realtime';
  const nice = Number(text);
  if (!Number.isInteger(nice) || nice < -20 || nice > 19) throw new Error(`BENCH_CALLS_API_PRIORITY: ${text} is neither realtime nor a nice value`);
  return nice;
}

export function applyPriority(pid: number, priority: SchedulingPriority): void {
  if (priority === 'realtime') execFileSync('chrt', ['--all-tasks', '--fifo', '--pid', '10', String(pid)]);
  else setPriority(pid, priority);
}
