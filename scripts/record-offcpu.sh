#!/usr/bin/env bash
# record-offcpu.sh: (re)records testdata/cases/offcpu, a capture of the
# tracepoints sched:sched_switch and sched:sched_waking with
# PERF_RECORD_SWITCH records (--switch-events) of one program, for
# --off-cpu and --off-cpu=wakers (src/tests/offcpu.sh).
# Run as root from the repository root.
#
# The workload (testdata/src/offcpu/offcpu.c) naps (sleeping), waits for
# a vfork child (blocked) and runs two spinning threads on one CPU
# (preempted), and waits for a pipe its waker_thread writes.  Recorded per
# task, not system-wide, so the capture holds only the workload's threads
# (and only the wakeups they make): a thread's switch-in is then known from
# its PERF_RECORD_SWITCH "in" record, or from a sched_switch of another
# workload thread whose next_pid it is.  The binary is static so that the
# case's symfs is that one file at the recorded path
# /tmp/kfold-fx-offcpu/bin/offcpu; only user callchains are recorded
# (--user-callchains): the kernel's frames would need this machine's
# kallsyms, which the committed testdata/kallsyms.zst is not.  perf runs
# on CPU 0 (taskset) and its child inherits that, so the spinners share
# one CPU without a taskset process in the capture.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=/tmp/kfold-fx-offcpu/bin/offcpu
case=testdata/cases/offcpu
mkdir -p "$(dirname "$bin")" "$case/symfs$(dirname "$bin")"
gcc -std=gnu11 -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-static -pthread -o "$bin" testdata/src/offcpu/offcpu.c
cp "$bin" "$case/symfs$bin"
cmd=(perf record -N -e sched:sched_switch -e sched:sched_waking --switch-events
	--user-callchains -g -o "$case/perf.data" -- "$bin")
taskset -c 0 "${cmd[@]}"
: > "$case/args"
printf 'Recorded by scripts/record-offcpu.sh:\n  taskset -c 0 %s\n' "${cmd[*]}" > "$case/README"
scripts/oracle.sh "$case" > "$case/expected.folded"
# stackcollapse sees no event name on a tracepoint's header line (its
# trace fields end it), so the oracle folds sched_switch and sched_waking
# together; kfold's default mode folds the first sample's event: the
# oracle with the header line ending in the event, filtered to it
scripts/oracle.sh "$case" -F comm,tid,time,event,ip,sym,dso -- \
	--event-filter sched:sched_switch > "$case/expected.switch.folded"
cat > "$case/corrections" <<'EOT'
# The default mode folds the first sample's event, sched:sched_switch;
# stackcollapse-perf.pl finds no event name on a tracepoint's header line
# (docs/perf-compat.md F9) and folds sched_waking's samples too.  The
# expectation starts from the oracle of the sched_switch samples alone
# (perf script -F comm,tid,time,event,ip,sym,dso, collapsed with
# --event-filter sched:sched_switch; scripts/record-offcpu.sh).
source	expected.switch.folded
# W1 (docs/perf-compat.md): the frame below __libc_start_call_main (a
# frame-pointer chain gone wrong in static glibc's start code) returns to
# 0x4015f0, the first byte of __do_global_dtors_aux; kfold names a
# return address by the call before it, 0x4015ef, in register_tm_clones
# (0x4015b0, the next symbol; checked with nm -n on the symfs binary).
# Rebuilt binaries may lay it out differently: check again on recording.
replace	;__do_global_dtors_aux;__libc_start_call_main	;register_tm_clones;__libc_start_call_main
EOT
echo "$case: $(wc -c < "$case/perf.data") bytes, $(wc -l < "$case/expected.folded") stacks"
