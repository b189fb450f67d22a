#!/usr/bin/env bash
# The whole test suite, from a fresh checkout: installs what is missing,
# builds kfold twice (gcc with warnings as errors; clang with ASan+UBSan)
# and runs every test in both builds (and the multi-threaded ones under
# ThreadSanitizer): the tests of committed captures in
# a private namespace that hides this machine (scripts/hermetic.sh), under
# the recording host's name in the gcc build and another in the ASan one.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/setup.sh

if [ ! -f build/build.ninja ]; then
	meson setup build --buildtype=debugoptimized
fi
meson compile -C build
# The tests of committed captures must not lean on this machine: they run
# as if elsewhere (scripts/hermetic.sh: empty HOME and TMPDIR, the
# fixtures' /tmp/kfold-fx, /usr/lib/debug and the running kernel's
# symbols hidden), once under the recording machine's hostname ("vm") and
# once under another; the tests that record captures themselves ("live")
# use this machine as it is.
scripts/hermetic.sh vm meson test -C build --print-errorlogs -t 2 --no-suite live
meson test -C build --print-errorlogs -t 2 --suite live

if [ ! -f build-asan/build.ninja ]; then
	CC=clang CXX=clang++ meson setup build-asan -Db_sanitize=address,undefined \
		-Db_lundef=false -Darena_debug=true --buildtype=debug
fi
meson compile -C build-asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
# (ASan makes kfold several times slower: the timeouts are only a safety net)
scripts/hermetic.sh kfold-elsewhere meson test -C build-asan --print-errorlogs -t 4 --no-suite live
meson test -C build-asan --print-errorlogs -t 4 --suite live
unset ASAN_OPTIONS UBSAN_OPTIONS
# ThreadSanitizer over what runs on more than one thread (--jobs): the
# worker queue's own test and every committed capture with --jobs 1, 2,
# 3, 8 (a race report changes standard error, which jobs.sh compares)
if [ ! -f build-tsan/build.ninja ]; then
	CC=clang CXX=clang++ meson setup build-tsan -Db_sanitize=thread \
		-Db_lundef=false --buildtype=debugoptimized
fi
meson compile -C build-tsan kfold:executable test-feed
TSAN_OPTIONS=halt_on_error=1 scripts/hermetic.sh vm \
	meson test -C build-tsan --no-rebuild --print-errorlogs -t 4 feed jobs
# libFuzzer builds of the fuzz targets, each run for a bounded time on the
# committed corpus plus the captures (a campaign, not a unit test: the time
# bound only keeps CI short)
if [ ! -f build-fuzz/build.ninja ]; then
	CC=clang CXX=clang++ meson setup build-fuzz -Dfuzzing=true \
		-Db_sanitize=address,undefined -Db_lundef=false \
		--buildtype=debugoptimized
fi
meson compile -C build-fuzz
fuzz_secs=${KFOLD_FUZZ_SECONDS:-30}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in perfdata sample debuginfo annotate tar perfarchive bundle; do
	mkdir -p "$work/$t"
	if [ "$t" = perfdata ]; then
		for f in testdata/cases/*/perf.data; do
			[ -f "$f" ] && cp "$f" "$work/$t/$(basename "$(dirname "$f")")"
		done
	fi
	# the debug-info and annotate targets start from the test binaries and
	# debug files
	if [ "$t" = debuginfo ] || [ "$t" = annotate ]; then
		find testdata/symfs testdata/dwz -type f -size -64k -exec cp -t "$work/$t" {} + 2>/dev/null || true
	fi
	# the whole-pipeline target also unwinds with the symfs's real CFI
	KFOLD_FUZZ_SYMFS=$PWD/testdata/symfs \
	UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		"build-fuzz/src/fuzz/fuzz-$t" -max_total_time="$fuzz_secs" \
		-max_len=65536 -print_final_stats=1 "$work/$t" "testdata/fuzz/$t" \
		2> "$work/fuzz-$t.log" || { tail -50 "$work/fuzz-$t.log"; exit 1; }
	grep -E "^stat::number_of_executed_units|^stat::peak_rss" "$work/fuzz-$t.log" |
		sed "s/^/fuzz-$t: /"
done
echo "test.sh: all tests passed"
