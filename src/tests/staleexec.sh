#!/usr/bin/env bash
# staleexec.sh KFOLD SRCDIR: a DWARF capture, recorded now, of a child that
# execs while its parent's mapping of libc lies below the child's own
# (testdata/src/staleexec.c; gcc and cc1 are in that state one time in
# two).  perf 6.1 keeps the parent's mappings across the exec and looks
# for libc's CFI at the lowest of them (docs/perf-compat.md U8), so it
# finds none and falls back to frame pointers in libc: its stacks of the
# sorting child do not reach main.  Checks that
#   --compat=perf equals perf script | collapse on this capture,
#   perf's stacks really broke there (the case is the one meant), and
#   the default mode unwinds through libc to _start.
# Exits 77 (skipped) where perf cannot record.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc

gcc -std=gnu11 -O2 -g -I "$src/testdata/src" -o "$tmp/staleexec" \
	"$src/testdata/src/staleexec.c" || exit 1
live_kallsyms "$tmp/kallsyms"
mkdir -p "$tmp/home" "$tmp/emptycache"
: > "$tmp/perfconfig"
if ! HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig perf record -N -q -e cpu-clock \
	-F 1000 --call-graph dwarf -o "$tmp/perf.data" -- "$tmp/staleexec" 0.3 \
	> "$tmp/rec.log" 2>&1; then
	cat "$tmp/rec.log"
	skip "perf record failed here (permissions? perf_event_paranoid?)"
fi
(cd "$tmp" && HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C \
	perf --buildid-dir "$tmp/emptycache" script -i "$tmp/perf.data" \
	--kallsyms "$tmp/kallsyms" --no-inline 2>/dev/null) > "$tmp/script.txt"
python3 "$src/scripts/collapse-perf.py" "$tmp/script.txt" > "$tmp/want"
[ -s "$tmp/want" ] || { echo "FAIL: the oracle folded nothing"; exit 1; }
"$kfold" -q --compat=perf --no-inline --kallsyms "$tmp/kallsyms" \
	--buildid-dir "$tmp/emptycache" "$tmp/perf.data" > "$tmp/got" || exit 1
if ! diff -u "$tmp/want" "$tmp/got"; then
	echo "FAIL: kfold --compat=perf differs from perf on the stale-exec capture"
	exit 1
fi
echo "ok   --compat=perf equals perf script | collapse ($(wc -l < "$tmp/want") stacks)"

# the child's samples in by_value (called from qsort in libc)
sum() { awk -v re="$1" '$0 ~ re { n += $NF } END { print n + 0 }' "$2"; }
all=$(sum 'by_value' "$tmp/want")
perf_main=$(sum 'main;sort_round;.*by_value' "$tmp/want")
[ "$all" -gt 0 ] || { echo "FAIL: no sample in by_value"; exit 1; }
if [ "$perf_main" -ne 0 ]; then
	echo "FAIL: perf unwound by_value through libc to main: not the stale-map case"
	grep 'main;sort_round' "$tmp/want" | head -3
	exit 1
fi
echo "ok   perf's stacks of by_value stop in libc ($all samples' worth, none reach main)"

"$kfold" -q --no-inline --kallsyms "$tmp/kallsyms" --buildid-dir "$tmp/emptycache" \
	"$tmp/perf.data" > "$tmp/default" || exit 1
def_main=$(sum '^exe;_start;__libc_start_main[^;]*;__libc_start_call_main;main;sort_round;[^;]*qsort[^;]*;(msort[^;]*;)*by_value[ ;]' "$tmp/default")
def_all=$(sum 'by_value' "$tmp/default")
if [ "$def_main" -ne "$def_all" ]; then
	echo "FAIL: default mode: $def_main of $def_all of by_value's weight reach _start through qsort"
	grep 'by_value' "$tmp/default" | grep -v '^exe;_start' | head -3
	exit 1
fi
echo "ok   default mode unwinds every by_value stack through libc to _start"
