#!/usr/bin/env bash
# archive-live.sh KFOLD SRCDIR: what `perf archive` cannot do.  A program
# with inlined functions (testdata/src/inline/inl.c, gcc -O2 -g) is built
# now and recorded three ways: into a pipe (`-o -`, read by `kfold
# archive -` from standard input), with `-z --call-graph dwarf`, and with
# `-g` into a file.  Each capture records no build-id (pipe, -z) or one;
# kfold archive bundles it with the program, then the program is deleted.
# The bundle's folded stacks with --srcline (names, inline frames, file
# and line) equal the capture's read before the deletion, and they name
# the program's inlined functions; the capture itself now names nothing
# of the program.  `perf archive` on the pipe and -z captures fails or
# finds no build-id (the reason this exists).  Asserts about its own
# workload only.
set -uo pipefail
kfold=$(realpath "$1")
src=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/live-lib.sh"
live_need perf gcc
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fail=0

prog=$tmp/kfold-arlive
gcc -std=gnu11 -O2 -g -o "$prog" "$src/testdata/src/inline/inl.c" || exit 1
cd "$tmp" || exit 1

# record: pipe (fp), -z with DWARF, a plain file (fp)
perf record -N -q -e cpu-clock -F 999 -g -o - -- "$prog" 0.3 > pipe.data 2> rec.err ||
	skip "perf record cannot run here: $(head -2 rec.err)"
perf record -N -q -e cpu-clock -F 999 -z --call-graph dwarf,8192 -o z.data -- "$prog" 0.3 \
	2> rec.err || skip "perf record -z cannot run here: $(head -2 rec.err)"
perf record -N -q -e cpu-clock -F 999 -g -o f.data -- "$prog" 0.3 2> rec.err ||
	skip "perf record cannot run here: $(head -2 rec.err)"

for c in pipe z f; do
	"$kfold" --srcline "$c.data" > "$c.before" 2> "$c.before.err"
	if [ "$c" = pipe ]; then
		"$kfold" archive -q - -o "$c.tar.zst" < "$c.data" 2> "$c.arerr"
	else
		"$kfold" archive -q "$c.data" -o "$c.tar.zst" 2> "$c.arerr"
	fi || { echo "FAIL $c: kfold archive: $(head -3 "$c.arerr")"; fail=1; }
done
# perf archive cannot bundle the pipe and -z captures
for c in pipe z; do
	out=$(perf archive "$c.data" 2>&1)
	rc=$?
	if [ $rc -eq 0 ] && ! grep -qi "no build-ids" <<< "$out"; then
		echo "note $c: perf archive exit $rc: $(head -1 <<< "$out")"
	fi
done
rm -f "$prog"

for c in pipe z f; do
	"$kfold" --srcline "$c.tar.zst" > "$c.after" 2> "$c.after.err"
	"$kfold" --srcline "$c.data" > "$c.gone" 2> /dev/null
	if ! cmp -s "$c.before" "$c.after"; then
		echo "FAIL $c: the bundle's stacks differ from the capture's before the deletion:"
		diff "$c.before" "$c.after" | head -5
		fail=1
	fi
	# the workload's own frames: compute_stats and the inlined mix
	if ! grep -q 'compute_stats' "$c.after" || ! grep -q 'mix' "$c.after" ||
	   ! grep -q 'inl\.c:[0-9]' "$c.after"; then
		echo "FAIL $c: the bundle's stacks lack the program's (inlined) frames"
		fail=1
	fi
	if grep -q 'compute_stats' "$c.gone"; then
		echo "FAIL $c: the capture still names the deleted program: the test proves nothing"
		fail=1
	fi
	echo "ok   $c: $(wc -l < "$c.after") stacks named from the bundle after the program was deleted"
done
exit $fail
