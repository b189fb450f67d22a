#!/usr/bin/env bash
# threads.sh SRCDIR TEST-THREADS: the JSON report and --explain read the
# same from the table of each stack's threads as from a root per thread
# (test-threads.c), on every committed capture.  Most have threads with
# stacks of their own (a comm each), where the table saves nothing;
# ordering's threads share theirs, and must give fewer stacks with it
# (threads-live.sh records more such threads).
set -euo pipefail
src=$1
test_threads=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"

n=0
for dir in "$src"/testdata/cases/*/; do
	[ -f "$dir/perf.data" ] || continue
	fewer=()
	[ "$(basename "$dir")" = ordering ] && fewer=(fewer)
	"$test_threads" "$dir/perf.data" "$(kf_symfs "$dir")" "$KF_KALLSYMS" "$KF_NOCACHE" \
		${fewer[@]+"${fewer[@]}"}
	n=$((n + 1))
done
[ "$n" -gt 30 ] || { echo "FAIL: only $n captures found"; exit 1; }
echo "$n captures: the same report and explanation with the table of threads"
