#!/usr/bin/env python3
"""offcpu-oracle.py FOLDED SCRIPT [TIMEHIST] --comm COMM [--wakers]: checks
the off-CPU times of `kfold --off-cpu --tid` (FOLDED) for the threads that
ran as COMM, against perf's own reading of the same capture.

SCRIPT is `perf script --ns -F comm,tid,time,event,trace` of the capture
(add --show-switch-events for a capture recorded with --switch-events).  From
it, in time order, each switch-out of a thread (a sched_switch whose
prev_pid it is) waits for the thread's next switch-in (a sched_switch
whose next_pid it is, or a PERF_RECORD_SWITCH without "OUT" of it); the
time between is charged to the state prev_state says.  An exiting
thread's switch-out (X, Z) is not charged; a second switch-out with no
switch-in between replaces the first; a thread still waiting at the end
is charged up to the capture's last event; a wait of 0 ns (both ends at
one timestamp) counts 1 ns, as kfold keeps its stack.  Per thread and
state, kfold's nanoseconds must equal these exactly.

With --wakers, FOLDED is `kfold --off-cpu=wakers --tid`: each wait is
charged to (thread, state, waker) instead, the waker being the comm (as
perf script prints it, spaces made '_') of the thread that made the first
sched_waking or sched_wakeup of it between its switch-out and switch-in,
or none.

TIMEHIST, when given, is `perf sched timehist --state`: at each
switch-out of a thread it prints the thread's wait before it, truncated to
the microsecond, and the state of this switch-out.  It takes the end of
the wait from the previous switch on the CPU, not from the switch-in, and
on a loaded machine the two can differ (a row with a wait of 0 after one
too long was seen); it prints no row for the last switch-out of a thread
that was not its process's last (perf 6.1).  So per thread and state its
sum must lie within one microsecond per row below the script's (plus the
wait before such an exit), or within 1% of it; a thread that left its CPU
twice with no switch-in between (seen on a loaded machine: kfold and the
script drop the first wait, timehist charges it otherwise) is not
compared with timehist.

Exit status 0 when everything agrees; the comparison on stdout.
"""
import argparse
import re
import sys

STATE = {'R': 'preempted', 'R+': 'preempted', '?': 'preempted',
         'S': 'sleeping', 'D': 'blocked', 'T': 'stopped', 't': 'traced',
         'X': 'dead', 'Z': 'dead', 'P': 'parked', 'I': 'idle'}


# perf 6.1's timehist names a state by the index of its lowest bit in the
# letters of kernels before 4.14, "RSDTtZXxKWP" (builtin-sched.c
# TASK_STATE_TO_CHAR_STR), so today's bits read shifted: X (0x10) as Z,
# Z (0x20) as X, P (0x40) as x, I (0x80) as K, and a preempted R+ (0x100)
# as W (checked on one capture: perf script's R+ and Z rows are
# timehist's W and X)
TIMEHIST_STATE = {'R': 'preempted', 'W': 'preempted', 'S': 'sleeping',
                  'D': 'blocked', 'T': 'stopped', 't': 'traced', 'Z': 'dead',
                  'X': 'dead', 'x': 'parked', 'K': 'idle'}


def state_of(letter):
    return STATE.get(letter, '?' + letter)


def timehist_state_of(letter):
    return TIMEHIST_STATE.get(letter, '?' + letter)


def read_folded(path, comm, wakers):
    """(tid, state[, waker]) -> ns, and the tids that ran as comm"""
    got, tids = {}, set()
    for line in open(path):
        stack, w = line.rsplit(' ', 1)
        parts = stack.split(';')
        # pid and tid -1: a thread the kernel could no longer name and
        # whose prev_pid names no thread kfold knows (not the workload's)
        m = re.fullmatch(r'(.*)-(-?\d+)/(-?\d+)', parts[0])
        s = re.fullmatch(r'\[off-cpu:([a-z]+)\]', parts[1]) if len(parts) > 1 else None
        if not m or not s:
            sys.exit('FAIL: a line without a root and a state: ' + line[:160])
        tid = int(m.group(3))
        if m.group(1) == comm:
            tids.add(tid)
        key = (tid, s.group(1))
        if wakers:
            key += (parts[3] if len(parts) > 3 and parts[2] == '[woken-by]' else '',)
        got[key] = got.get(key, 0) + int(w)
    return got, tids


def read_script(path, tids, wakers):
    """(tid, state[, waker]) -> ns, and per (tid, state) the wait before
    an exit"""
    want, before_exit = {}, {}
    unmatched = {}     # tid -> switch-outs followed by another, no switch-in
    out = {}           # tid -> [time, state, waker] of a switch-out waiting
    last_wait = {}     # tid -> (state, ns) of its last wait
    last_t = 0
    rx = re.compile(r'\s*(.*?)\s+(-?\d+)\s+(\d+)\.(\d{9}):\s+(\S+?):?\s+(.*)')

    def switch_in(tid, t):
        if tid in out:
            t0, st, wk = out.pop(tid)
            key = (tid, st) + ((wk or '',) if wakers else ())
            want[key] = want.get(key, 0) + max(t - t0, 1)
            last_wait[tid] = (st, t - t0)

    for line in open(path):
        m = rx.match(line)
        if not m:
            continue
        comm, tid = m.group(1), int(m.group(2))
        t = int(m.group(3)) * 10**9 + int(m.group(4))
        last_t = max(last_t, t)
        event, rest = m.group(5), m.group(6)
        if event in ('sched:sched_waking', 'sched:sched_wakeup'):
            p = re.search(r'\bpid=(\d+)', rest)
            if p and int(p.group(1)) in out and out[int(p.group(1))][2] is None:
                out[int(p.group(1))][2] = comm.replace(' ', '_')
            continue
        if event.startswith('PERF_RECORD_SWITCH'):
            if not rest.startswith('OUT'):
                switch_in(tid, t)
            continue
        if event != 'sched:sched_switch':
            continue
        f = dict(re.findall(r'(prev_pid|prev_state|next_pid)=(\S+)', rest))
        prev, nxt = int(f['prev_pid']), int(f['next_pid'])
        switch_in(nxt, t)
        if prev not in tids:
            continue
        st = state_of(f['prev_state'])
        if st == 'dead':
            out.pop(prev, None)
            if prev in last_wait:
                k = (prev, last_wait[prev][0])
                before_exit[k] = before_exit.get(k, 0) + last_wait[prev][1]
        else:
            if prev in out:
                unmatched[prev] = unmatched.get(prev, 0) + 1
            out[prev] = [t, st, None]
    for tid, (t0, st, wk) in out.items():
        key = (tid, st) + ((wk or '',) if wakers else ())
        want[key] = want.get(key, 0) + max(last_t - t0, 1)
    return want, before_exit, unmatched


def read_timehist(path, tids):
    th, last = {}, {}
    for line in open(path):
        f = line.split()
        if len(f) < 7 or not re.fullmatch(r'\d+\.\d+', f[0]):
            continue
        m = re.fullmatch(r'.*\[(\d+)(?:/\d+)?\]', f[2])
        if not m or int(m.group(1)) not in tids:
            continue
        tid = int(m.group(1))
        if tid in last:
            ms, us = f[3].split('.')
            v = th.setdefault((tid, timehist_state_of(last[tid])), [0, 0])
            v[0] += int(ms) * 1000 + int(us)
            v[1] += 1
        last[tid] = f[6]
    return th


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('folded')
    ap.add_argument('script')
    ap.add_argument('timehist', nargs='?')
    ap.add_argument('--comm', required=True)
    ap.add_argument('--wakers', action='store_true')
    a = ap.parse_args()
    got, tids = read_folded(a.folded, a.comm, a.wakers)
    if not tids:
        sys.exit('FAIL: no thread ran as %s' % a.comm)
    want, before_exit, unmatched = read_script(a.script, tids, a.wakers)
    bad = 0
    for k in sorted(set(want) | set(x for x in got if x[0] in tids)):
        ok = got.get(k, 0) == want.get(k, 0)
        print('%s tid %d %-9s %skfold %12d ns, perf script %12d ns' %
              ('ok  ' if ok else 'FAIL', k[0], k[1],
               'woken by %-12s ' % (k[2] or '-') if a.wakers else '',
               got.get(k, 0), want.get(k, 0)))
        bad += not ok
    if a.timehist and not a.wakers:
        th = read_timehist(a.timehist, tids)
        for k in sorted(set(th) | set(want)):
            if k[0] in unmatched:
                # a switch-out with no switch-in before the next: kfold
                # and the script drop the first wait, timehist charges it
                # in its own way (seen on a loaded machine)
                print('skip tid %d %-9s timehist: %d switch-outs of the thread had no '
                      'switch-in before the next' % (k[0], k[1], unmatched[k[0]]))
                continue
            us, rows = th.get(k, [0, 0])
            ns = want.get(k, 0)
            gap = before_exit.get(k, 0) // 1000
            ok = (us <= ns // 1000 <= us + rows + gap + 1 or
                  abs(us * 1000 - ns) <= ns // 100)
            print('%s tid %d %-9s timehist %9d us in %3d rows (and %d us before an '
                  'exit)' % ('ok  ' if ok else 'FAIL', k[0], k[1], us, rows, gap))
            bad += not ok
    by = {}
    for k, ns in got.items():
        if k[0] in tids:
            by[k[1]] = by.get(k[1], 0) + ns
    print('%s: %s' % (a.comm, ' '.join('%s %d ns' % kv for kv in sorted(by.items()))))
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
