#!/usr/bin/env bash
# offcpu-live.sh KFOLD SRC: --off-cpu on a capture recorded now, against
# perf sched timehist on the same file.  The workload (testdata/src/offcpu/offcpu.c) naps, waits for a vfork
# child, runs two spinning threads on one CPU and waits for a pipe that a
# thread of its own writes; perf records every CPU's sched:sched_switch
# and sched:sched_waking with -g.
#
# Per thread of the workload and per state, kfold's nanoseconds must
# equal the times between switch-outs and switch-ins that perf script
# prints, and agree with perf sched timehist's wait times
# (scripts/offcpu-oracle.py says how).  Then what the workload must show
# (its three states), --jobs, the report's weight and totals, --samples
# and the statistics.
# Exits 77 (skipped) where perf cannot record the tracepoints.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# KFOLD_KEEP=DIR: the capture and the texts compared are kept there
keep() { [ -n "${KFOLD_KEEP:-}" ] && mkdir -p "$KFOLD_KEEP" && cp -r "$tmp"/. "$KFOLD_KEEP"/; }

. "$src/src/tests/live-lib.sh"
live_need perf gcc taskset python3

gcc -O1 -g -fno-omit-frame-pointer -pthread -o "$tmp/offcpu" \
	"$src/testdata/src/offcpu/offcpu.c" || exit 1
perf record -N -a -e sched:sched_switch -e sched:sched_waking -g -o "$tmp/cap" \
	-- taskset -c 0 "$tmp/offcpu" > "$tmp/record.log" 2>&1 ||
	skip "perf cannot record sched:sched_switch system-wide: $(tail -1 "$tmp/record.log")"

fail=0
"$kfold" --off-cpu --tid --stats -o "$tmp/tid.folded" "$tmp/cap" 2> "$tmp/stats" || {
	echo "FAIL: kfold --off-cpu exited $?"; cat "$tmp/stats"; exit 1; }
perf --buildid-dir "$tmp/bid" sched timehist --state -i "$tmp/cap" \
	> "$tmp/timehist" 2> "$tmp/timehist.err" || {
	echo "FAIL: perf sched timehist: $(tail -1 "$tmp/timehist.err")"; exit 1; }

perf --buildid-dir "$tmp/bid" script --ns -F comm,tid,time,event,trace -i "$tmp/cap" \
	> "$tmp/script" 2> "$tmp/script.err" || {
	echo "FAIL: perf script: $(tail -1 "$tmp/script.err")"; exit 1; }
python3 "$src/scripts/offcpu-oracle.py" --comm offcpu "$tmp/tid.folded" \
	"$tmp/script" "$tmp/timehist" > "$tmp/oracle" || fail=1
cat "$tmp/oracle"
# what the workload did: 30 ms naps, a 30 ms vfork wait, 160 ms of
# spinning on one CPU in two threads
python3 - "$tmp/oracle" <<'EOF' || fail=1
import re, sys
by = dict((s, int(n)) for s, n in re.findall(r'(\w+) (\d+) ns', open(sys.argv[1]).read().splitlines()[-1]))
bad = 0
for s, least in (('sleeping', 25e6), ('blocked', 25e6), ('preempted', 20e6)):
    if by.get(s, 0) < least:
        print('FAIL: the workload spent %d ns %s, want at least %d' % (by.get(s, 0), s, least))
        bad += 1
sys.exit(bad)
EOF

grep -q '^kfold: off-CPU: [1-9][0-9]* switch-outs weighed' "$tmp/stats" || {
	echo "FAIL: --stats says nothing of the off-CPU switch-outs"; cat "$tmp/stats"; fail=1; }
for j in 1 2 3; do
	"$kfold" --off-cpu -q --jobs $j "$tmp/cap" > "$tmp/j$j" || fail=1
done
cmp -s "$tmp/j1" "$tmp/j2" && cmp -s "$tmp/j1" "$tmp/j3" ||
	{ echo "FAIL: --off-cpu differs between --jobs 1, 2 and 3"; fail=1; }
"$kfold" report --off-cpu -q -o "$tmp/report.json" "$tmp/cap" || fail=1
"$kfold" --off-cpu --samples -q "$tmp/cap" > "$tmp/samples" || fail=1
python3 - "$tmp/j1" "$tmp/report.json" "$tmp/samples" "$tmp/stats" <<'EOF' || fail=1
import json, re, sys
total = sum(int(l.rsplit(' ', 1)[1]) for l in open(sys.argv[1]))
r = json.load(open(sys.argv[2]))
t = r['totals']
if t['weight'] != 'off-cpu-ns' or t['period'] != total:
    sys.exit('FAIL: report totals %s, want weight off-cpu-ns and period %d' % (t, total))
n = sum(int(l.rsplit(' ', 1)[1]) for l in open(sys.argv[3]))
m = re.search(r'off-CPU: (\d+) switch-outs weighed, (\d+)\.(\d{9}) s', open(sys.argv[4]).read())
if int(m.group(1)) != n or int(m.group(2)) * 10**9 + int(m.group(3)) != total:
    sys.exit('FAIL: --stats says %s, --samples counts %d, the folded weights sum to %d'
             % (m.group(0), n, total))
if t['samples'] != n:
    sys.exit('FAIL: the report counts %d samples, --samples %d' % (t['samples'], n))
print('ok: report, --samples and --stats agree: %d switch-outs, %d ns' % (n, total))
EOF
# --off-cpu=wakers: each wait charged to the thread whose wakeup ended
# it, exactly as perf script's sched_waking lines say; the pipe read of
# the workload's main thread was ended by its waker_thread
"$kfold" --off-cpu=wakers --tid --stats -o "$tmp/wakers.folded" "$tmp/cap" 2> "$tmp/wstats" ||
	{ echo "FAIL: kfold --off-cpu=wakers exited $?"; cat "$tmp/wstats"; fail=1; }
python3 "$src/scripts/offcpu-oracle.py" --wakers --comm offcpu "$tmp/wakers.folded" \
	"$tmp/script" > "$tmp/woracle" || fail=1
cat "$tmp/woracle"
grep -q '^offcpu-[0-9]*/[0-9]*;\[off-cpu:sleeping\];\[woken-by\];offcpu;.*;waker_thread;' \
	"$tmp/wakers.folded" ||
	{ echo "FAIL: no wait of the workload woken from its waker_thread"; grep '^offcpu' "$tmp/wakers.folded"; fail=1; }
grep -q '^kfold: off-CPU: [1-9][0-9]* waits ended by a recorded wakeup' "$tmp/wstats" ||
	{ echo "FAIL: --stats counts no wakeups"; fail=1; }
"$kfold" --off-cpu=wakers -q --jobs 1 "$tmp/cap" > "$tmp/w1" &&
	"$kfold" --off-cpu=wakers -q --jobs 2 "$tmp/cap" > "$tmp/w2" && cmp -s "$tmp/w1" "$tmp/w2" ||
	{ echo "FAIL: --off-cpu=wakers differs between --jobs 1 and 2"; fail=1; }
# the event folded is sched_switch: another --event is refused
"$kfold" --off-cpu --event sched:sched_wakeup -q "$tmp/cap" > /dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: --off-cpu --event sched:sched_wakeup was not refused with 2"; fail=1; }
[ $fail -eq 0 ] || keep
exit $fail
