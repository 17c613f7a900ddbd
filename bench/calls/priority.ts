/**
 * @module Scheduling priorities the roles benchmark gives the process answering the API and the
 * clients measuring it:
 * - a nice value on every thread (what an operator sharing a machine could set, as `Nice=`): a
 *   larger share of the cores;
 * - `slice:<µs>`, a shorter time slice on Linux 6.12 or later (EEVDF's custom slice, the
 *   `sched_runtime` of sched_setattr(2) under SCHED_OTHER; `chrt --other --sched-runtime` from
 *   util-linux 2.41): the same share of the cores, but an earlier deadline, meant to let a waking
 *   thread preempt the one running (on a full host it does not shorten the wait: docs/PERFORMANCE.md
 *   "Scheduler settings short of a core of its own");
 * - `realtime` (SCHED_FIFO on every thread, by chrt): not a setting to deploy, but the nearest
 *   this machine comes to giving them a core of their own, so the wait for a core drops out of the
 *   figure.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';

export type SchedulingPriority = 'realtime' | { nice?: number; sliceUs?: number };

/** The kernel clamps a custom slice to this range (kernel/sched/syscalls.c). */
const SLICE_US = { min: 100, max: 100_000 };

/**
 * BENCH_CALLS_API_PRIORITY: unset, `realtime`, or a nice value (-20 to 19; below 0 needs root),
 * `slice:<µs>`, or both joined by a comma (`-10,slice:100`).
 */
export function parsePriority(text: string | undefined): SchedulingPriority | undefined {
  if (text === undefined || text === '') return undefined;
  if (text === 'realtime') return 'realtime';
  const priority: { nice?: number; sliceUs?: number } = {};
  for (const part of text.split(',')) {
    const slice = /^slice:(\d+)$/.exec(part);
    if (slice) {
      priority.sliceUs = Number(slice[1]);
      if (priority.sliceUs < SLICE_US.min || priority.sliceUs > SLICE_US.max) throw new Error(`BENCH_CALLS_API_PRIORITY: a slice is ${SLICE_US.min} to ${SLICE_US.max} µs`);
      continue;
    }
    priority.nice = Number(part);
    if (!Number.isInteger(priority.nice) || priority.nice < -20 || priority.nice > 19) throw new Error(`BENCH_CALLS_API_PRIORITY: ${part} is neither realtime, slice:<µs> nor a nice value`);
  }
  return priority;
}

export function applyPriority(pid: number, priority: SchedulingPriority): void {
  if (priority === 'realtime') {
    execFileSync('chrt', ['--all-tasks', '--fifo', '--pid', '10', String(pid)]);
    return;
  }
  // The nice value first: sched_setattr below keeps the one it reads.
  if (priority.nice !== undefined) for (const tid of threads(pid)) setPriority(tid, priority.nice);
  if (priority.sliceUs !== undefined) setSlice(threads(pid), priority.sliceUs);
}

const threads = (pid: number): number[] => readdirSync(`/proc/${pid}/task`).map(Number);

/**
 * sched_setattr(2) on each thread, keeping its policy and nice value and setting
 * `sched_runtime`, which SCHED_OTHER reads as the slice. Node has no binding for the call and
 * Debian 12's chrt (util-linux 2.38) no option for it, so Python's ctypes makes it; x86_64 system
 * call numbers. Throws when the kernel refuses or reads back another slice (before 6.12 it keeps
 * its own).
 */
function setSlice(tids: readonly number[], sliceUs: number): void {
  execFileSync('python3', ['-c', SET_SLICE_PY, String(sliceUs * 1000), ...tids.map(String)], { stdio: ['ignore', 'ignore', 'inherit'] });
}

const SET_SLICE_PY = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("size", ctypes.c_uint32), ("policy", ctypes.c_uint32), ("flags", ctypes.c_uint64),
                ("nice", ctypes.c_int32), ("priority", ctypes.c_uint32), ("runtime", ctypes.c_uint64),
                ("deadline", ctypes.c_uint64), ("period", ctypes.c_uint64), ("util_min", ctypes.c_uint32), ("util_max", ctypes.c_uint32)]
def call(number, tid, attr, *rest):
    if libc.syscall(number, tid, ctypes.byref(attr), *rest) != 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()), tid)
runtime = int(sys.argv[1])
for tid in map(int, sys.argv[2:]):
    attr = Attr()
    try:
        call(315, tid, attr, ctypes.sizeof(attr), 0)
    except OSError:
        continue  # the thread has ended
    attr.size, attr.runtime = ctypes.sizeof(attr), runtime
    call(314, tid, attr, 0)
    back = Attr()
    call(315, tid, back, ctypes.sizeof(back), 0)
    if back.runtime != runtime:
        sys.exit(f"thread {tid} kept a slice of {back.runtime} ns: this kernel has no custom slice")
`;
