#!/usr/bin/env bash
# live-soak.sh [RUNS] [BUILD_DIR]: run the "live" test suite (the tests that
# record captures on this machine) RUNS times in a row (default 10) while a
# compile runs beside it, and say how many runs passed.
#
# The live tests record system-wide captures, so whatever else runs on the
# machine shows up in them; they must assert about their own workload and
# about classes only.  The compile (kfold itself, rebuilt from scratch in a
# loop, into a private build directory) keeps cc1, as and ld starting and
# exiting on every CPU, as the run that found issue 11's unknown tick had.
# Needs root and perf, like the live suite.  Not part of scripts/test.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
runs=${1:-10}
build=${2:-$root/build}
work=$(mktemp -d)
noise=
cleanup() {
	if [ -n "$noise" ]; then
		kill "$noise" 2>/dev/null || true
		wait "$noise" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

meson setup "$work/noise" "$root" > /dev/null
(
	while :; do
		ninja -C "$work/noise" -t clean > /dev/null
		ninja -C "$work/noise" > /dev/null 2>&1 || true
	done
) &
noise=$!

pass=0
for i in $(seq "$runs"); do
	if meson test -C "$build" --suite live --print-errorlogs > "$work/run$i.log" 2>&1; then
		pass=$((pass + 1))
		echo "run $i: pass"
	else
		echo "run $i: FAIL"
		grep -E '^(FAIL|note)' "$build/meson-logs/testlog.txt" | head -20
	fi
	grep -hE '^note: local_timer_entry' "$build/meson-logs/testlog.txt" || true
done
echo "live-soak: $pass of $runs runs passed with a compile running beside them"
[ "$pass" -eq "$runs" ]
