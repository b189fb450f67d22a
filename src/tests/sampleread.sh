#!/usr/bin/env bash
# sampleread.sh KFOLD SRCDIR TEST-SAMPLEREAD: weights of PERF_SAMPLE_READ
# (leader-sampled group) captures against perf 6.1 itself.
#
#  1. the crafted edge cases of test-sampleread (written with --write): perf
#     script | collapse-perf.py of each, for the first event and for each
#     member, equals kfold --compat=perf (and the default mode, which
#     differs only on inherited counters);
#  2. captures recorded now with `perf record -N -e '{cpu-clock,task-clock}:S'
#     -g` of a program built now (per thread, and -a: one id per CPU):
#     --compat=perf equals perf, for each event (with -a: the workload's
#     stacks), and the default mode's total
#     per event is what the definition gives from `perf report -D`'s values:
#     the sum over ids of each id's last value (the first sample weighs its
#     whole value, then each the growth: the weights telescope);
#  3. 'cpu-clock:S' (one event, read_format ID, inherit) on two threads:
#     --compat=perf equals perf, whose per-id differences mix the threads'
#     counts; the default mode's total is the sum over (id, thread) of the
#     last values.
# Exits 77 (meson's "skipped") where perf cannot record.
set -uo pipefail
kfold=$1
src=$2
writer=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc
mkdir -p "$tmp/home" "$tmp/empty" "$tmp/img"
: > "$tmp/perfconfig"
fail=0

# hperf ARGS...: perf with no configuration, cache or home of this machine
hperf() {
	(cd "$tmp" && HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C \
		perf --buildid-dir "$tmp/empty" "$@")
}

# same_but_rounding: $tmp/want and $tmp/got have the same lines, but for
# weights past 2^64 - 1 that differ by rounding only: stackcollapse's Perl
# rounds after each addition once a sum is floating point, kfold rounds
# the exact sum (README, "Weights of PERF_SAMPLE_READ samples")
same_but_rounding() {
	python3 - "$tmp/want" "$tmp/got" <<'PY'
import sys
a = [l.rsplit(" ", 1) for l in open(sys.argv[1])]
b = [l.rsplit(" ", 1) for l in open(sys.argv[2])]
ok = len(a) == len(b)
for (sa, wa), (sb, wb) in zip(a, b):
    if sa != sb:
        ok = False
    elif wa != wb:
        fa, fb = float(wa), float(wb)
        ok = ok and "e+" in wa and "e+" in wb and abs(fa - fb) <= 1e-12 * fa
sys.exit(0 if ok else 1)
PY
}

# compare NAME FILE EVENT-AS-PERF-NAMES-IT KFOLD-ARGS...: perf script |
# collapse of FILE (its first event when EVENT is empty) against kfold
compare() {
	local name=$1 file=$2 ev=$3
	shift 3
	hperf script -i "$file" --no-inline "${PERF_ARGS[@]}" 2>/dev/null |
		python3 "$src/scripts/collapse-perf.py" ${ev:+--event-filter="$ev"} \
		> "$tmp/want" 2>/dev/null
	"$kfold" -q --no-inline --buildid-dir "$tmp/empty" "$@" "$file" > "$tmp/got" ||
		{ echo "FAIL $name: kfold exited $?"; fail=1; return; }
	# a system-wide capture: only the workload's stacks are ours to check
	# (other programs' files may be gone by the time kfold reads them)
	if [ -n "${ONLY_ROOT:-}" ]; then
		grep "^$ONLY_ROOT;" "$tmp/want" > "$tmp/want.own"
		grep "^$ONLY_ROOT;" "$tmp/got" > "$tmp/got.own"
		mv "$tmp/want.own" "$tmp/want"
		mv "$tmp/got.own" "$tmp/got"
	fi
	if [ ! -s "$tmp/want" ]; then
		echo "FAIL $name: perf folded nothing"
		fail=1
	elif ! diff -u "$tmp/want" "$tmp/got" > "$tmp/diff" && ! same_but_rounding; then
		echo "FAIL $name: kfold $* differs from perf:"
		head -20 "$tmp/diff"
		fail=1
	else
		echo "ok   $name: $(wc -l < "$tmp/want") stacks, total $(awk '{ s += $NF } END { printf "%.0f", s }' "$tmp/want")"
	fi
}

# ---- 1. crafted captures -------------------------------------------------
"$writer" --write "$tmp/img" > "$tmp/writer.log" || { cat "$tmp/writer.log"; exit 1; }
PERF_ARGS=(--symfs "$tmp/empty" --kallsyms /dev/null)
kf=(--symfs "$tmp/empty" --kallsyms /dev/null)
n=0
for f in "$tmp"/img/*.data; do
	name=$(basename "$f" .data)
	case $name in
	hostile)	# perf stops at the lying count ("Can't parse sample")
		continue ;;
	no-id)		# perf refuses the file ("non matching read_format")
		if hperf script -i "$f" > /dev/null 2>&1; then
			echo "FAIL no-id: perf 6.1 read a capture without PERF_FORMAT_ID"
			fail=1
		fi
		continue ;;
	esac
	# the crafted files name no event: perf calls them cpu-clock:HG
	compare "$name" "$f" "" "${kf[@]}" --compat=perf
	compare "$name cpu-clock" "$f" cpu-clock:HG "${kf[@]}" --compat=perf --event cpu-clock
	case $name in
	inherit|no-inherit|backwards) ;;	# no task-clock values
	*) compare "$name task-clock" "$f" task-clock:HG "${kf[@]}" --compat=perf --event task-clock ;;
	esac
	# the default mode differs only where counters are per thread
	[ "$name" = inherit ] || compare "$name (default mode)" "$f" "" "${kf[@]}"
	n=$((n + 1))
done
[ "$n" -ge 8 ] || { echo "FAIL: only $n crafted captures compared"; fail=1; }

# ---- 2. and 3. fresh captures ---------------------------------------------
cat > "$tmp/w.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void spin_a(unsigned long n)
{ for (unsigned long i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) static void spin_b(unsigned long n)
{ for (unsigned long i = 0; i < n; i++) sink ^= i * 3; }
static void *thread(void *arg)
{ for (int r = 0; r < 10; r++) spin_b(2000000); return arg; }
int main(int argc, char **argv)
{
	pthread_t t;
	if (argc > 1)
		pthread_create(&t, 0, thread, 0);
	for (int r = 0; r < 10; r++) { spin_a(1000000); spin_b(2000000); }
	if (argc > 1)
		pthread_join(t, 0);
	return 0;
}
EOF
gcc -std=gnu11 -O0 -fno-omit-frame-pointer -pthread -o "$tmp/wload" "$tmp/w.c" || exit 1
live_kallsyms "$tmp/kallsyms"

record() {
	local out=$1
	shift
	if ! HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig perf record -N -q -o "$out" "$@" \
		> "$tmp/rec.log" 2>&1; then
		cat "$tmp/rec.log"
		skip "perf record failed here (permissions? perf_event_paranoid?)"
	fi
}

# telescoped DATA PER-THREAD: per event name ($tmp/ids), the sum over ids
# (and threads when PER-THREAD is 1) of the last value perf report -D shows
telescoped() {
	hperf report -D -i "$1" 2>/dev/null | python3 -c '
import re, sys
per_thread = sys.argv[1] == "1"
last = {}
tid = None
for line in sys.stdin:
    m = re.search(r"PERF_RECORD_SAMPLE\(.*?\): (\d+)/(\d+):", line)
    if m:
        tid = m.group(2)
        continue
    m = re.match(r"\.\.\.\.\. id ([0-9a-f]+), value ([0-9a-f]+)", line.strip())
    if m:
        key = (m.group(1), tid if per_thread else None)
        last[key] = int(m.group(2), 16)
ids = {}
for line in open(sys.argv[2]):
    m = re.match(r"(\S+)\s+(\d+)$", line)
    if m:
        ids[int(m.group(2))] = m.group(1)
tot = {}
for (i, _), v in last.items():
    ev = ids.get(int(i, 16), "?")
    tot[ev] = tot.get(ev, 0) + v
for ev in sorted(tot):
    print(ev, tot[ev])
' "$2" "$tmp/ids"
}

# ids_by_position DATA EVENTS: writes $tmp/ids, "EVENT ID" per line: each
# id perf report -D shows in a read block is the event at its position in
# the group (EVENTS, comma-separated, leader first: the kernel's order)
ids_by_position() {
	hperf report -D -i "$1" 2>/dev/null | python3 -c '
import re, sys
evs = sys.argv[1].split(",")
seen = {}
pos = 0
for line in sys.stdin:
    if "group nr" in line or "sample_read" in line:
        pos = 0
        continue
    m = re.match(r"\.\.\.\.\. id ([0-9a-f]+), value", line.strip())
    if m:
        seen.setdefault(int(m.group(1), 16), evs[min(pos, len(evs) - 1)])
        pos += 1
for i, ev in sorted(seen.items()):
    print(ev, i)
' "$2" > "$tmp/ids"
}

# kfold_totals EVENTS...: per event, the default mode's total on $DATA
kfold_totals() {
	local ev
	for ev in "$@"; do
		printf '%s %s\n' "$ev" "$("$kfold" -q --no-inline --buildid-dir "$tmp/empty" \
			--event "$ev" "$DATA" | python3 -c 'import sys; print(sum(int(l.split()[-1]) for l in sys.stdin))')"
	done | sort
}

PERF_ARGS=(--kallsyms "$tmp/kallsyms")
kf=(--kallsyms "$tmp/kallsyms")
for mode in thread cpu; do
	DATA=$tmp/group-$mode.data
	if [ $mode = cpu ]; then
		record "$DATA" -a -e '{cpu-clock,task-clock}:S' -F 1000 -g -- "$tmp/wload"
	else
		record "$DATA" -e '{cpu-clock,task-clock}:S' -F 1000 -g -- "$tmp/wload"
	fi
	ONLY_ROOT=
	[ $mode = cpu ] && ONLY_ROOT=wload
	compare "live group ($mode)" "$DATA" "" "${kf[@]}" --compat=perf
	compare "live group ($mode) cpu-clock" "$DATA" cpu-clock "${kf[@]}" --compat=perf --event cpu-clock
	compare "live group ($mode) task-clock" "$DATA" task-clock "${kf[@]}" --compat=perf --event task-clock
	ONLY_ROOT=
	ids_by_position "$DATA" cpu-clock,task-clock
	want=$(telescoped "$DATA" 0)
	got=$(kfold_totals cpu-clock task-clock)
	if [ "$want" != "$got" ] || [ -z "$want" ]; then
		echo "FAIL live group ($mode): default-mode totals"; echo "$got"
		echo "differ from the sums of the last values per id:"; echo "$want"
		fail=1
	else
		echo "ok   live group ($mode): default-mode totals are the last values summed per id:" $want
	fi
done

DATA=$tmp/inherit.data
record "$DATA" -e 'cpu-clock:S' -F 1000 -g -- "$tmp/wload" 2
compare "live cpu-clock:S, 2 threads" "$DATA" "" "${kf[@]}" --compat=perf
ids_by_position "$DATA" cpu-clock:S
want=$(telescoped "$DATA" 1)
got=$(kfold_totals cpu-clock:S)
if [ "$want" != "$got" ] || [ -z "$want" ]; then
	echo "FAIL live cpu-clock:S: default-mode total $got is not the sum of the last values per (id, thread): $want"
	fail=1
else
	echo "ok   live cpu-clock:S: default-mode total is the last values summed per (id, thread):" $want
fi
exit $fail
