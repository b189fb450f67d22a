#!/usr/bin/env bash
# offcpu.sh KFOLD SRCDIR: --off-cpu on the committed capture
# testdata/cases/offcpu (scripts/record-offcpu.sh: sched:sched_switch and
# PERF_RECORD_SWITCH records of one program, recorded per task).
#
#  - per thread and state, the nanoseconds of `kfold --off-cpu --tid` equal
#    the times from each switch-out to the thread's next switch-in that
#    the hermetic `perf script --show-switch-events` prints
#    (scripts/offcpu-oracle.py), and the workload's three states are there;
#    with --off-cpu=wakers, per thread, state and waker;
#  - the stacks are the ones plain folding gives (golden.sh checks those
#    against perf): with --samples and the state frame taken out, each
#    stack counts at most what `kfold --samples` counts, and the switch-outs
#    missing are exactly those --stats says were not weighed;
#  - the flame graph's and pprof's times, states and wakers are folded
#    output's;
#  - the same output for --jobs 1, 2, 3 and 8, with --context, and for the
#    capture converted to the other byte order (scripts/perf-byteswap.py:
#    the tracepoint payloads keep the byte order their tracing data says);
#  - a thread sampled with tid -1 on its way out: folded as the thread
#    its prev_pid names;
#  - hostile: the tracing data cut off or its formats' field lines
#    garbled, the raw payloads cut short: warnings, no crash, exit 0.
set -uo pipefail
kfold=$1
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"
case=$src/testdata/cases/offcpu
kf_case "$case"
fail=0

"$kfold" --off-cpu --tid --stats "${KF_CASE[@]}" -o "$tmp/tid.folded" "$case/perf.data" \
	2> "$tmp/stats" || { echo "FAIL: kfold --off-cpu exited $?"; cat "$tmp/stats"; exit 1; }
if command -v perf >/dev/null; then
	kf_perf_script "$tmp" "$case/perf.data" "$(kf_symfs "$case")" --show-switch-events \
		--ns -F comm,tid,time,event,trace > "$tmp/script" 2> "$tmp/script.err" ||
		{ echo "FAIL: perf script: $(tail -1 "$tmp/script.err")"; exit 1; }
	python3 "$src/scripts/offcpu-oracle.py" --comm offcpu "$tmp/tid.folded" \
		"$tmp/script" > "$tmp/oracle" || fail=1
	cat "$tmp/oracle"
	tail -1 "$tmp/oracle" | grep -q 'blocked [1-9].*preempted [1-9].*sleeping [1-9]' ||
		{ echo "FAIL: the workload's three states are not all there"; fail=1; }
else
	echo "SKIP the perf oracle: perf not found"
fi

# --off-cpu=wakers: each wait charged to the thread whose wakeup ended it
# (here the workload's own: a capture of some tasks holds only their
# wakeups), as perf script's sched_waking lines say
"$kfold" --off-cpu=wakers --tid --stats "${KF_CASE[@]}" -o "$tmp/wakers.folded" \
	"$case/perf.data" 2> "$tmp/wstats" || { echo "FAIL: --off-cpu=wakers exited $?"; fail=1; }
if command -v perf >/dev/null; then
	python3 "$src/scripts/offcpu-oracle.py" --wakers --comm offcpu "$tmp/wakers.folded" \
		"$tmp/script" > "$tmp/woracle" || fail=1
	cat "$tmp/woracle"
fi
grep -q '^offcpu-[0-9]*/[0-9]*;\[off-cpu:sleeping\];\[woken-by\];offcpu;start_thread;waker_thread;' \
	"$tmp/wakers.folded" ||
	{ echo "FAIL: the pipe wait is not woken from waker_thread"; cat "$tmp/wakers.folded"; fail=1; }
for j in 1 2 3; do
	"$kfold" --off-cpu=wakers --jobs $j -q "${KF_CASE[@]}" "$case/perf.data" > "$tmp/w$j" || fail=1
done
cmp -s "$tmp/w1" "$tmp/w2" && cmp -s "$tmp/w1" "$tmp/w3" ||
	{ echo "FAIL: --off-cpu=wakers differs between --jobs 1, 2, 3"; fail=1; }
"$kfold" --off-cpu=sideways -q "${KF_CASE[@]}" "$case/perf.data" > /dev/null 2>&1
[ $? -eq 2 ] || { echo "FAIL: --off-cpu=sideways was not refused with 2"; fail=1; }

# the stacks: those of plain folding, fewer the switch-outs not weighed
"$kfold" --off-cpu --samples -q "${KF_CASE[@]}" "$case/perf.data" > "$tmp/oc.samples" || fail=1
"$kfold" --samples --event sched:sched_switch -q "${KF_CASE[@]}" "$case/perf.data" \
	> "$tmp/plain.samples" || fail=1
python3 - "$tmp/oc.samples" "$tmp/plain.samples" "$tmp/stats" <<'EOF' || fail=1
import re, sys
def read(path, strip):
    d = {}
    for line in open(path):
        stack, n = line.rsplit(' ', 1)
        parts = stack.split(';')
        if strip:
            if len(parts) < 2 or not re.fullmatch(r'\[off-cpu:[a-z]+\]', parts[1]):
                sys.exit('FAIL: no state frame after the root: ' + line)
            del parts[1]
        k = ';'.join(parts)
        d[k] = d.get(k, 0) + int(n)
    return d
oc, plain = read(sys.argv[1], True), read(sys.argv[2], False)
st = re.search(r'not weighed: (\d+) with no switch-in seen, (\d+) exiting, (\d+) of '
               r'the idle task, (\d+) unreadable', open(sys.argv[3]).read())
if not st:
    sys.exit('FAIL: --stats has no off-CPU line')
missing = sum(plain.values()) - sum(oc.values())
bad = [k for k in oc if oc[k] > plain.get(k, 0)]
if bad or missing != sum(int(x) for x in st.groups()) or missing < 0:
    sys.exit('FAIL: stacks %s counted more than plain folding, or %d switch-outs '
             'missing against %s not weighed' % (bad, missing, st.groups()))
print('ok: %d switch-outs weighed in %d stacks, %d not weighed (%s)'
      % (sum(oc.values()), len(oc), missing, ', '.join(st.groups())))
EOF

"$kfold" --off-cpu -q "${KF_CASE[@]}" "$case/perf.data" > "$tmp/j0" || fail=1
for j in 1 2 3 8; do
	"$kfold" --off-cpu -q --jobs $j "${KF_CASE[@]}" "$case/perf.data" > "$tmp/j$j" || fail=1
	cmp -s "$tmp/j0" "$tmp/j$j" || { echo "FAIL: --jobs $j differs"; fail=1; }
done
# --context adds no frame to user-only stacks
"$kfold" --off-cpu --context -q "${KF_CASE[@]}" "$case/perf.data" > "$tmp/ctx" || fail=1
cmp -s "$tmp/j0" "$tmp/ctx" || { echo "FAIL: --context changed user-only stacks"; fail=1; }
[ -s "$tmp/j0" ] || { echo "FAIL: empty --off-cpu output"; fail=1; }

# the flame graph and pprof: the same times, the state (and the waker) as
# folded output has them after the root
"$kfold" flamegraph --off-cpu --format svg -q "${KF_CASE[@]}" -o "$tmp/oc.svg" "$case/perf.data" || fail=1
python3 - "$tmp/j0" "$tmp/oc.svg" <<'EOF' || fail=1
import re, sys
by = {}
for line in open(sys.argv[1]):
    stack, n = line.rsplit(' ', 1)
    root = ';'.join(stack.split(';')[:2])
    by[root] = by.get(root, 0) + int(n)
svg = open(sys.argv[2]).read()
for root, ns in sorted(by.items()):
    want = '<title>%s (%.3f ms,' % (root.replace('&', '&amp;'), ns / 1e6)
    if want not in svg:
        sys.exit('FAIL: the flame graph has no %r' % want)
print('ok: flame graph: %d roots with their times' % len(by))
EOF
if command -v go >/dev/null; then
	pprof=$(go env GOTOOLDIR)/pprof
	"$kfold" --off-cpu=wakers --format pprof -q "${KF_CASE[@]}" -o "$tmp/w.pb.gz" "$case/perf.data" || fail=1
	PPROF_TMPDIR=$tmp "$pprof" -raw "$tmp/w.pb.gz" > "$tmp/w.raw" 2>&1 || fail=1
	grep -q '^PeriodType: off-cpu nanoseconds' "$tmp/w.raw" &&
		grep -q 'off_cpu:\[sleeping\].*woken_by:\[offcpu\]' "$tmp/w.raw" ||
		{ echo "FAIL: pprof: no off-cpu type or labels"; head -20 "$tmp/w.raw"; fail=1; }
	"$kfold" --off-cpu --format pprof -q "${KF_CASE[@]}" -o "$tmp/oc.pb.gz" "$case/perf.data" || fail=1
	PPROF_TMPDIR=$tmp "$pprof" -raw "$tmp/oc.pb.gz" > "$tmp/oc.raw" 2>&1 || fail=1
	python3 - "$tmp/j0" "$tmp/oc.raw" <<'EOF' || fail=1
import re, sys
total = sum(int(l.rsplit(' ', 1)[1]) for l in open(sys.argv[1]))
raw = open(sys.argv[2]).read()
got = sum(int(v) for v in re.findall(r'^\s+\d+\s+(\d+):', raw, re.M))
states = set(re.findall(r'off_cpu:\[(\w+)\]', raw))
if got != total or states != {'sleeping', 'blocked', 'preempted'}:
    sys.exit('FAIL: pprof sums %d ns (folded %d), states %s' % (got, total, states))
print('ok: pprof: %d ns in the states %s' % (got, sorted(states)))
EOF
else
	echo "SKIP pprof: go not found"
fi

python3 "$src/scripts/perf-byteswap.py" "$case/perf.data" "$tmp/swapped.data" > /dev/null ||
	{ echo "FAIL: perf-byteswap.py"; fail=1; }
"$kfold" --off-cpu -q "${KF_CASE[@]}" "$tmp/swapped.data" > "$tmp/swapped" || fail=1
cmp -s "$tmp/j0" "$tmp/swapped" ||
	{ echo "FAIL: the big-endian capture folds otherwise:"; diff "$tmp/j0" "$tmp/swapped" | head; fail=1; }

# --compat=perf and annotate refuse it; another event is refused
for args in "--compat=perf" "--event sched:sched_wakeup"; do
	"$kfold" --off-cpu $args -q "${KF_CASE[@]}" "$case/perf.data" > /dev/null 2> "$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && grep -q off-cpu "$tmp/err" ||
		{ echo "FAIL: --off-cpu $args: exit $rc, $(cat "$tmp/err")"; fail=1; }
done
# sched_switch recorded per task without --switch-events: no switch-in of
# the task is in the capture, which the warning says with what to do
"$kfold" --off-cpu "${KF_CASE[@]}" --symfs "$src/testdata/cases/tracepoint/symfs" \
	"$src/testdata/cases/tracepoint/perf.data" > /dev/null 2> "$tmp/err"
rc=$?
[ $rc -eq 0 ] && grep -q 'no switched-out thread was seen switching back in.*--switch-events' "$tmp/err" ||
	{ echo "FAIL: a capture without switch-ins: exit $rc, $(cat "$tmp/err")"; fail=1; }
# a capture without sched_switch: the event is missing (exit 2)
"$kfold" --off-cpu -q "${KF_CASE[@]}" "$src/testdata/cases/syscall/perf.data" > /dev/null 2> "$tmp/err"
rc=$?
[ $rc -eq 2 ] && grep -q 'sched:sched_switch' "$tmp/err" ||
	{ echo "FAIL: --off-cpu on a cpu-clock capture: exit $rc, $(cat "$tmp/err")"; fail=1; }

# an exiting thread that has unhashed its pid (release_task in do_exit)
# is sampled with tid -1, and with pid -1 too when its whole process is
# gone (perf_event_pid_type); its sched_switch's prev_pid still names it.
# A non-leader thread's samples made so (tid, then pid and tid) must fold
# as before, the switch-outs counted by --stats
python3 - "$case/perf.data" "$tmp/tid.folded" "$tmp" <<'EOF' || fail=1
import re, struct, sys
data = bytearray(open(sys.argv[1], 'rb').read())
tids = sorted(set((int(p), int(t)) for p, t in re.findall(
    r'^offcpu-(\d+)/(\d+);', open(sys.argv[2]).read(), re.M)))
pid, tid = [x for x in tids if x[0] != x[1]][-1]
off, size = struct.unpack_from('<QQ', data, 40)
for name, unset_pid in (('tidgone', False), ('pidgone', True)):
    d, pos, n = bytearray(data), off, 0
    while pos + 8 <= off + size:
        typ, _, sz = struct.unpack_from('<IHH', d, pos)
        if sz < 8:
            sys.exit('FAIL: a record of size %d at %d' % (sz, pos))
        # a sample of IP|TID|...: pid and tid after the ip
        if typ == 9 and struct.unpack_from('<ii', d, pos + 16) == (pid, tid):
            struct.pack_into('<ii', d, pos + 16, -1 if unset_pid else pid, -1)
            n += 1
        pos += sz
    if n == 0:
        sys.exit('FAIL: no sample of thread %d/%d' % (pid, tid))
    open('%s/%s.data' % (sys.argv[3], name), 'wb').write(d)
    print('%s: %d samples of %d/%d made tid -1%s' % (name, n, pid, tid,
          ', pid -1' if unset_pid else ''))
EOF
for h in tidgone pidgone; do
	"$kfold" --off-cpu --tid --stats "${KF_CASE[@]}" -o "$tmp/$h.folded" "$tmp/$h.data" \
		2> "$tmp/$h.err" || { echo "FAIL: $h: exit $?"; fail=1; continue; }
	cmp -s "$tmp/tid.folded" "$tmp/$h.folded" ||
		{ echo "FAIL: $h: folded otherwise than the thread prev_pid names"
		  diff "$tmp/tid.folded" "$tmp/$h.folded"; fail=1; }
	grep -q '^kfold: off-CPU: [1-9][0-9]* switch-outs sampled with tid -1' "$tmp/$h.err" ||
		{ echo "FAIL: $h: --stats does not count the switch-outs of tid -1"; fail=1; }
done

# hostile formats (the same lengths, so the file's layout stays): a
# field's name garbled; prev_state placed past the end of the payload;
# next_pid's size made 8 (a pid is 4 bytes)
python3 - "$case/perf.data" "$tmp" <<'EOF' || fail=1
import re, sys
data = open(sys.argv[1], 'rb').read()
out = sys.argv[2]
def put(name, old, new):
    i = data.find(old)
    if i < 0 or len(old) != len(new):
        sys.exit('FAIL: no %r in the capture' % old)
    open('%s/%s.data' % (out, name), 'wb').write(data[:i] + new + data[i + len(old):])
put('noname', b'field:pid_t next_pid;', b'field:pid_t next_pit;')
m = re.search(rb'long prev_state;\s*offset:(\d\d);', data)
put('pastend', m.group(0), m.group(0).replace(b'offset:' + m.group(1), b'offset:99'))
m = re.search(rb'next_pid;\s*offset:\d+;\s*size:4;', data)
put('size8', m.group(0), m.group(0).replace(b'size:4;', b'size:8;'))
EOF
for h in noname pastend size8; do
	"$kfold" --off-cpu --stats "${KF_CASE[@]}" "$tmp/$h.data" > "$tmp/$h.out" 2> "$tmp/$h.err"
	rc=$?
	[ $rc -eq 0 ] || { echo "FAIL: $h: exit $rc"; cat "$tmp/$h.err"; fail=1; continue; }
	echo "ok: $h: $(grep -m1 'warning: --off-cpu' "$tmp/$h.err")"
done
for h in noname size8; do
	grep -q "cannot be weighed" "$tmp/$h.err" && [ ! -s "$tmp/$h.out" ] ||
		{ echo "FAIL: $h: no word on the format, or stacks weighed"; fail=1; }
done
grep -q "does not hold the fields" "$tmp/pastend.err" && [ ! -s "$tmp/pastend.out" ] &&
	grep -q 'off-CPU: 0 switch-outs weighed.* [1-9][0-9]* unreadable' "$tmp/pastend.err" ||
	{ echo "FAIL: pastend: no word on the payload, or stacks weighed"; cat "$tmp/pastend.err"; fail=1; }
exit $fail
