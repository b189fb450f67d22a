#!/usr/bin/env bash
# stitch.sh KFOLD SRCDIR: --stitch on the committed capture
# testdata/cases/stitch (scripts/record-stitch.sh: a recursion 60 levels
# deep and back, slowly, no frame pointers, --call-graph dwarf,8192, whose
# copies hold the whole stack; golden.sh checks it against perf), with
# every stack copy cut to 1024 bytes (scripts/patch-dynsize.py).
#
#  - per sample (each picked by its own time with --time): the stack of
#    the cut capture with --stitch is the committed capture's full unwind
#    wherever it was completed; where it is still cut, its frames are the
#    full stack's innermost ones.  Most cut samples are completed;
#  - --stats and the report count alike; --all marks stitched frames
#    _[s] and only with --stitch; the report's frame objects say
#    "stitched";
#  - the same output for --jobs 1, 2, 3 and 8 and for the capture in the
#    other byte order (scripts/perf-byteswap.py);
#  - refused (exit 2) with --compat=perf and by kfold annotate.
set -uo pipefail
kfold=$1
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"
case=$src/testdata/cases/stitch
kf_case "$case"
fail=0
run() { "$kfold" --no-inline "${KF_CASE[@]}" "$@" 2> /dev/null; }

python3 "$src/scripts/patch-dynsize.py" --min 1024 --max 1024 "$case/perf.data" \
	"$tmp/cut.data" 2> "$tmp/patch.log" || { echo "FAIL: patch-dynsize.py: $(cat "$tmp/patch.log")"; exit 1; }

"$kfold" --no-inline --stitch --stats "${KF_CASE[@]}" -o "$tmp/stitched.folded" \
	"$tmp/cut.data" 2> "$tmp/stats" || { echo "FAIL: kfold --stitch exited $?"; cat "$tmp/stats"; exit 1; }
counts=$(python3 "$src/scripts/stitch-counts.py" "$tmp/stats") || exit 1
read -r cut done frames still <<< "$counts"
grep '^kfold: --stitch: ' "$tmp/stats"
# "completed" counts the samples that took frames from earlier ones; those
# that then reached _start are the cut ones not still cut
[ "$cut" -ge 100 ] && [ "$still" -le "$cut" ] && [ "$done" -le "$cut" ] &&
	[ $(((cut - still) * 10)) -ge $((cut * 9)) ] && [ "$frames" -ge "$done" ] || {
	echo "FAIL: want at least 100 cut samples, nine in ten completed: $line"; fail=1; }

# per sample
if command -v perf > /dev/null; then
	kf_perf_script "$tmp" "$case/perf.data" "$(kf_symfs "$case")" -F time --ns \
		2> /dev/null | tr -d ' :' > "$tmp/times"
	[ -s "$tmp/times" ] || { echo "FAIL: perf script listed no sample times"; exit 1; }
	[ "$(sort -u "$tmp/times" | wc -l)" -eq "$(wc -l < "$tmp/times")" ] || {
		echo "FAIL: two samples share a time: --time cannot pick one"; exit 1; }
	while read -r t; do
		printf '%s\t%s\t%s\n' "$t" "$(run --all --time "$t,$t" "$case/perf.data")" \
			"$(run --all --stitch --time "$t,$t" "$tmp/cut.data")"
	done < "$tmp/times" > "$tmp/pairs"
	python3 - "$tmp/pairs" "$done" <<'PY' || fail=1
import sys

def parse(line):
    text, _, count = line.rpartition(' ')
    fr = [f[:-4] if f.endswith('_[s]') else f for f in text.split(';')]
    cut = len(fr) > 1 and fr[1] == '[truncated]'
    return fr[0], fr[2:] if cut else fr[1:], cut, count, '_[s]' in text

n = equal = agree = marked = 0
bad = 0
for row in open(sys.argv[1]):
    t, a, b = row.rstrip('\n').split('\t')
    n += 1
    ra, fa, ca, na, _ = parse(a)
    rb, fb, cb, nb, sb = parse(b)
    marked += sb
    # the committed capture's copies hold whole stacks: its unwinds are the
    # full ones; a stitched stack is one of them, or still cut and then
    # their innermost frames
    ok = ra == rb and na == nb and not ca
    if ok and not cb:
        ok = fa == fb
        equal += ok
    elif ok:
        ok = fa[len(fa) - len(fb):] == fb
        agree += ok
    if not ok:
        bad += 1
        print('FAIL: the sample at %s:\n  committed: %s\n  cut, --stitch: %s' % (t, a, b))
print('samples %d: equal to the full unwind %d, still cut and its innermost frames %d; '
      'with _[s] frames %d' % (n, equal, agree, marked))
if n < 100 or bad or marked < int(sys.argv[2]) * 9 // 10:
    sys.exit('FAIL: want no disagreement, at least 100 samples and _[s] frames on '
             'most completed ones')
PY
else
	echo "perf is not installed: the per-sample comparison is skipped"
fi

# _[s] only where --stitch stitched, and the report agrees with --stats
run "$tmp/cut.data" > "$tmp/plain.folded"
run --all "$tmp/cut.data" | grep -q '_\[s\]' && { echo "FAIL: _[s] without --stitch"; fail=1; }
run --stitch "$tmp/cut.data" | grep -q '_\[s\]' && { echo "FAIL: _[s] without --all"; fail=1; }
"$kfold" report --no-inline --stitch "${KF_CASE[@]}" -o "$tmp/report.json" "$tmp/cut.data" \
	2> /dev/null || { echo "FAIL: kfold report --stitch"; fail=1; }
[ "$(python3 "$src/scripts/stitch-counts.py" "$tmp/stats" "$tmp/report.json")" = "$counts" ] ||
	fail=1
"$kfold" report --no-inline "${KF_CASE[@]}" "$tmp/cut.data" 2> /dev/null |
	python3 -c '
import json, sys
d = json.load(sys.stdin)
if "stitch" in d["diagnostics"]["unwinding"]["dwarf"] or \
   any("stitched" in f for f in d["frame_table"]):
    sys.exit("FAIL: the report speaks of stitching without --stitch")' || fail=1

# --jobs and the other byte order
for j in 1 2 3 8; do
	run --stitch --jobs "$j" "$tmp/cut.data" | cmp -s - "$tmp/stitched.folded" || {
		echo "FAIL: --stitch --jobs $j differs"; fail=1; }
done
if python3 "$src/scripts/perf-byteswap.py" "$tmp/cut.data" "$tmp/swapped.data" > /dev/null; then
	run --stitch "$tmp/swapped.data" | cmp -s - "$tmp/stitched.folded" || {
		echo "FAIL: --stitch on the other byte order differs"; fail=1; }
else
	echo "FAIL: perf-byteswap.py"; fail=1
fi

# a --symbols-only bundle keeps no stack pointers: a warning, nothing
# stitched, the cut samples counted
"$kfold" archive --symbols-only "${KF_CASE[@]}" -o "$tmp/so.tar.zst" "$tmp/cut.data" \
	2> "$tmp/archive.err" || { echo "FAIL: kfold archive --symbols-only"; cat "$tmp/archive.err"; fail=1; }
"$kfold" --no-inline --stitch --stats -o "$tmp/so.folded" "$tmp/so.tar.zst" 2> "$tmp/so.err"
grep -q 'warning: --stitch: a --symbols-only bundle.*nothing is stitched' "$tmp/so.err" &&
	grep -q "^kfold: --stitch: $cut samples ran out of the stack copy, 0 completed from earlier samples (0 frames), $cut still cut" "$tmp/so.err" &&
	cmp -s "$tmp/so.folded" "$tmp/plain.folded" || {
	echo "FAIL: --stitch on a --symbols-only bundle"; cat "$tmp/so.err"; fail=1; }

# refusals
for args in "--compat=perf --stitch" "annotate --stitch"; do
	# shellcheck disable=SC2086
	"$kfold" $args "${KF_CASE[@]}" "$tmp/cut.data" > /dev/null 2> "$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] && grep -q -- '--stitch' "$tmp/err" || {
		echo "FAIL: kfold $args: exit $rc, want 2 and a message naming --stitch"; cat "$tmp/err"; fail=1; }
done
exit $fail
