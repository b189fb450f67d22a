#!/usr/bin/env bash
# jobs.sh KFOLD SRCDIR: the output does not depend on --jobs.
#
# Every committed capture (testdata/cases/*, read with its case flags)
# is folded with --jobs 1, 2, 3 and 8, in four modes: the default,
# --context, --compat=perf --no-inline, and `kfold report` (JSON).  For
# each mode the standard output, the standard error and the exit status
# of every N must be those of --jobs 1, byte for byte.  --jobs 1 is the
# single-threaded run; 2 and more walk the stacks into the trie on a
# worker thread (src/model/feed.h), which test-feed checks on its own,
# gather the report's stacks in two halves on two threads
# (src/analysis/gather.c: every capture here with 64 stacks or more), and
# write the report's stacks in blocks on two threads (src/output/json.c:
# every capture with more than 16 stacks).
set -euo pipefail
kfold=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"

fail=0
checked=0
nonempty=0
for dir in "$src"/testdata/cases/*/; do
	name=$(basename "$dir")
	[ -e "$dir/perf.data" ] || continue
	kf_case "$dir"
	for mode in default context compat report; do
		case $mode in
		default) cmd=("$kfold") ;;
		context) cmd=("$kfold" --context) ;;
		compat) cmd=("$kfold" --compat=perf --no-inline) ;;
		report) cmd=("$kfold" report) ;;
		esac
		for n in 1 2 3 8; do
			rc=0
			(cd "$tmp" && "${cmd[@]}" "${KF_CASE[@]}" --jobs "$n" "$dir/perf.data") \
				> "$tmp/out.$n" 2> "$tmp/err.$n" || rc=$?
			echo "$rc" > "$tmp/rc.$n"
		done
		for n in 2 3 8; do
			for part in out err rc; do
				if ! cmp -s "$tmp/$part.1" "$tmp/$part.$n"; then
					echo "FAIL $name $mode: --jobs $n: standard $part differs from --jobs 1"
					diff "$tmp/$part.1" "$tmp/$part.$n" | head -5
					fail=1
				fi
			done
		done
		checked=$((checked + 1))
		[ -s "$tmp/out.1" ] && nonempty=$((nonempty + 1))
	done
done
echo "$checked capture/mode pairs compared for --jobs 1, 2, 3, 8; $nonempty with output"
# the comparison means something only where there was output to compare
[ "$checked" -ge 100 ] || { echo "FAIL: only $checked pairs (expected every committed capture)"; fail=1; }
[ "$nonempty" -ge $((checked * 9 / 10)) ] || { echo "FAIL: too few runs printed anything"; fail=1; }
exit "$fail"
