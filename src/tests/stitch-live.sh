#!/usr/bin/env bash
# stitch-live.sh KFOLD SRC: --stitch against the full unwinds of the same
# samples.  The workload (testdata/src/stitch/stitch.c) recurses 60 levels
# deep and back, slowly, with no frame pointers; perf records it with
# --call-graph dwarf,65528, which copies its whole stack.  The capture is
# then rewritten with every stack copy cut to 1024 bytes
# (scripts/patch-dynsize.py), so that almost every unwind runs out of the
# copy a few frames above the leaf.
#
# Per sample (each selected by its own time with --time): the stack kfold
# folds from the cut capture with --stitch is the one it folds from the
# full capture, frame for frame, wherever it was completed; where it is
# still cut, the frames it has are the full stack's innermost ones.  No
# sample may differ otherwise, and most must be completed.  Then the
# counts (--stats, the report), _[s] under --all, --jobs, and that a
# filter does not change the stacks of the samples it keeps.
# Exits 77 (skipped) where perf cannot record a DWARF call graph.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc python3

gcc -O1 -g -fomit-frame-pointer -o "$tmp/stitch" "$src/testdata/src/stitch/stitch.c" || exit 1
perf record -N -m 1024 -e cpu-clock -F 1000 --call-graph dwarf,65528 -o "$tmp/full" \
	-- "$tmp/stitch" 0.4 > "$tmp/record.log" 2>&1 ||
	skip "perf cannot record --call-graph dwarf: $(tail -1 "$tmp/record.log")"
python3 "$src/scripts/patch-dynsize.py" --min 1024 --max 1024 "$tmp/full" "$tmp/cut" \
	2> "$tmp/patch.log" || { echo "FAIL: patch-dynsize.py: $(cat "$tmp/patch.log")"; exit 1; }

fail=0
run() { "$kfold" --no-inline "$@" 2> /dev/null; }

# the cut is real: without --stitch most stacks end in [truncated]
run "$tmp/cut" > "$tmp/plain.folded"
awk '/^stitch;\[truncated\];/ { c += $NF } { t += $NF } END { exit !(c * 2 > t) }' \
	"$tmp/plain.folded" || { echo "FAIL: not most of the cut capture's weight ends in [truncated]"; fail=1; }

"$kfold" --no-inline --stitch --stats -o "$tmp/stitched.folded" "$tmp/cut" 2> "$tmp/stats" || {
	echo "FAIL: kfold --stitch exited $?"; cat "$tmp/stats"; exit 1; }
counts=$(python3 "$src/scripts/stitch-counts.py" "$tmp/stats") || exit 1
read -r cut done frames still <<< "$counts"
grep '^kfold: --stitch: ' "$tmp/stats"
[ "$cut" -ge 100 ] || { echo "FAIL: only $cut samples ran out of the 1024-byte copy"; fail=1; }
# "completed" counts the samples that took frames from earlier ones; those
# that then reached _start are the cut ones not still cut
[ $(((cut - still) * 10)) -ge $((cut * 8)) ] || { echo "FAIL: only $((cut - still)) of $cut cut samples were completed"; fail=1; }
[ "$still" -le "$cut" ] && [ "$done" -le "$cut" ] && [ "$frames" -ge "$done" ] || {
	echo "FAIL: the counts do not add up: $line"; fail=1; }

# per sample, against the full capture
perf --buildid-dir "$tmp/bid" script -F time --ns -i "$tmp/full" 2> /dev/null |
	tr -d ' :' > "$tmp/times"
[ "$(sort -u "$tmp/times" | wc -l)" -eq "$(wc -l < "$tmp/times")" ] || {
	echo "FAIL: two samples share a time: --time cannot pick one"; exit 1; }
n=0 same=0 prefix=0 marked=0
while read -r t; do
	a=$(run --all --time "$t,$t" "$tmp/full")
	b=$(run --stitch --all --time "$t,$t" "$tmp/cut")
	n=$((n + 1))
	case "$b" in *'_[s]'*) marked=$((marked + 1)) ;; esac
	b=${b//_\[s\]/}
	if [ "$a" = "$b" ]; then
		same=$((same + 1))
	elif rest=${b% *} && rest=${rest#stitch;\[truncated\];} &&
	     [[ "$b" == 'stitch;[truncated];'* && "${a##* }" == "${b##* }" &&
		"${a% *}" == *";$rest" ]]; then
		prefix=$((prefix + 1))
	else
		echo "FAIL: the sample at $t: --stitch on the cut capture gives"
		echo "  $b"
		echo "the full capture"
		echo "  $a"
		fail=1
	fi
done < "$tmp/times"
echo "samples: $n; equal to the full unwind: $same; still cut, the full stack's innermost frames: $prefix; with stitched frames: $marked"
[ "$n" -ge 100 ] && [ $((same + prefix)) -eq "$n" ] || fail=1
[ "$marked" -ge $((done * 9 / 10)) ] || { echo "FAIL: only $marked samples print _[s] frames, $done were completed"; fail=1; }

# the whole fold: the stitched stacks of every completed sample are the
# full ones; the still-cut ones are the only other lines
run "$tmp/full" > "$tmp/full.folded"
if [ "$still" -eq 0 ]; then
	cmp -s "$tmp/full.folded" "$tmp/stitched.folded" || {
		echo "FAIL: nothing is still cut, but the stitched fold differs from the full one"
		diff "$tmp/full.folded" "$tmp/stitched.folded" | head; fail=1; }
fi

# the report says what --stats says, and marks stitched frames
"$kfold" report --stitch -o "$tmp/report.json" "$tmp/cut" 2> /dev/null || { echo "FAIL: kfold report --stitch"; fail=1; }
[ "$(python3 "$src/scripts/stitch-counts.py" "$tmp/stats" "$tmp/report.json")" = "$counts" ] ||
	fail=1

# the same for every --jobs, and a filter keeps the stacks of what it keeps
for j in 1 2 3; do
	run --stitch --jobs "$j" "$tmp/cut" | cmp -s - "$tmp/stitched.folded" || {
		echo "FAIL: --stitch --jobs $j differs"; fail=1; }
done
half=$(sed -n "$(( $(wc -l < "$tmp/times") / 2 ))p" "$tmp/times")
run --stitch --time "$half," "$tmp/cut" > "$tmp/late.stitched"
run --time "$half," "$tmp/full" > "$tmp/late.full"
if [ "$still" -eq 0 ]; then
	cmp -s "$tmp/late.stitched" "$tmp/late.full" || {
		echo "FAIL: --time $half, --stitch differs from the full capture's"; fail=1; }
fi
exit $fail
