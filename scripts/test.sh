#!/usr/bin/env bash
# The whole test suite, from a fresh checkout: installs what is missing,
# builds kfold twice (gcc with warnings as errors; clang with ASan+UBSan)
# and runs every test in both builds.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
scripts/setup.sh

if [ ! -f build/build.ninja ]; then
	meson setup build --buildtype=debugoptimized
fi
meson compile -C build
meson test -C build --print-errorlogs

if [ ! -f build-asan/build.ninja ]; then
	CC=clang meson setup build-asan -Db_sanitize=address,undefined \
		-Db_lundef=false -Darena_debug=true --buildtype=debug
fi
meson compile -C build-asan
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	meson test -C build-asan --print-errorlogs
echo "test.sh: all tests passed"
