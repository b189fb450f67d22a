#!/usr/bin/env bash
# Record testdata/cases/cxx-scope, cxx-scope-dwarf and static-plt: C++ names
# with their scopes under inline expansion, and a static binary's .plt.
#
# usage: scripts/record-cxx-scope.sh              build, record all three
#        scripts/record-cxx-scope.sh --symfs-only rebuild the two binaries
#            and put them back into testdata/symfs (scripts/record-fixtures.sh
#            rebuilds the symfs from scratch and removes them); fails when
#            their build-ids are not the ones the captures recorded
#
# Needs root, perf 6.1, g++/gcc 12, python3.  Run it from anywhere.
#
# What it does:
#  1. builds testdata/src/cxx-scope/scope.cpp into
#     /tmp/kfold-fx-cxx2/bin/cxx-scope (the path the captures record):
#       g++ -std=gnu++17 -O2 -g -gz -fno-omit-frame-pointer
#           -mno-omit-leaf-frame-pointer -pthread -static-libstdc++ -static-libgcc
#     inlining on (gcc's default at -O2), so the hot paths are inline
#     chains; libstdc++ linked statically so that its frames (std::thread's
#     execute_native_thread_routine, std::call_once's __once_proxy) are
#     named from the binary's .symtab and unwound with its .eh_frame (the
#     shared libstdc++.so.6 is 2.2 MB, too big for the symfs); -gz
#     compresses the DWARF (0.46 MB instead of 0.85).  libc and ld.so are
#     the shared symfs's (same build-ids as on the recording machine);
#  2. builds testdata/src/static-plt/splt.c into /tmp/kfold-fx-splt/bin/splt:
#       gcc -std=gnu11 -O2 -static -fno-builtin -fno-omit-frame-pointer
#           -fno-optimize-sibling-calls
#  3. records, pinned to CPU 1, user space only (-e cpu-clock:u: the
#     committed testdata/kallsyms.zst is another kernel build than this
#     machine may run, and these cases are about user names):
#       cxx-scope        -F 1000 -g                   cxx-scope 0.4
#       cxx-scope-dwarf  -F 1000 --call-graph dwarf,4096 cxx-scope 0.4
#       static-plt       -F 20000 -g                  splt 0.5
#     static-plt is re-recorded until samples landed in three different
#     .plt entries (they are short: a jmp);
#  4. copies the binaries to testdata/symfs/tmp/kfold-fx-cxx2/bin and
#     testdata/symfs/tmp/kfold-fx-splt/bin, writes each case's README, args,
#     variants (inline for cxx-scope and cxx-scope-dwarf: perf's inline
#     expansion; addrs for static-plt), expected.folded (scripts/oracle.sh)
#     and expected.VARIANT.folded.  The corrections files are NOT rewritten: check them
#     against the new captures (src/tests/cxxscope.sh says how).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$script_dir")
cd "$root"
CXXBIN=/tmp/kfold-fx-cxx2/bin
PLTBIN=/tmp/kfold-fx-splt/bin
symfs=testdata/symfs
export LC_ALL=C

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'record-cxx-scope.sh: %s\n' "$*" >&2; exit 1; }

build() {
	mkdir -p "$CXXBIN" "$PLTBIN"
	g++ -std=gnu++17 -O2 -g -gz -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
		-pthread -static-libstdc++ -static-libgcc "-fdebug-prefix-map=$root=." \
		-Wall -Wextra -Werror -o "$CXXBIN/cxx-scope" testdata/src/cxx-scope/scope.cpp
	gcc -std=gnu11 -O2 -static -fno-builtin -fno-omit-frame-pointer -fno-optimize-sibling-calls \
		"-fdebug-prefix-map=$root=." -Wall -Wextra -Werror \
		-o "$PLTBIN/splt" testdata/src/static-plt/splt.c
	mkdir -p "$symfs$CXXBIN" "$symfs$PLTBIN"
	cp "$CXXBIN/cxx-scope" "$symfs$CXXBIN/"
	cp "$PLTBIN/splt" "$symfs$PLTBIN/"
}

bid() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }

if [ "${1:-}" = --symfs-only ]; then
	build
	for c in cxx-scope:"$CXXBIN/cxx-scope" cxx-scope-dwarf:"$CXXBIN/cxx-scope" static-plt:"$PLTBIN/splt"; do
		f=${c#*:}
		perf buildid-list -i "testdata/cases/${c%%:*}/perf.data" 2>/dev/null |
			grep -q "^$(bid "$f") $f\$" ||
			die "${c%%:*}: $f has build-id $(bid "$f"), not the recorded one"
	done
	log "binaries back in $symfs with the recorded build-ids"
	exit 0
fi
[ "$(id -u)" = 0 ] || die "run as root"
for tool in perf g++ gcc readelf objdump taskset python3; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
build

record() {   # record CASE DESCRIPTION PERF-ARGS... -- PROGRAM ARGS...
	local name=$1 desc=$2 dir=testdata/cases/$1
	shift 2
	mkdir -p "$dir"
	rm -f "$dir/perf.data"
	: > "$dir/args"
	{
		printf '%s\n' "$desc"
		printf 'recorded with (cwd = case directory; scripts/record-cxx-scope.sh):\n '
		printf ' %q' taskset -c 1 perf record -N -o perf.data "$@"
		printf '\n'
	} > "$dir/README"
	(cd "$dir" && taskset -c 1 perf record -N -o perf.data "$@") > /dev/null 2>&1
}

record cxx-scope "cxx-scope: C++ scopes of inline frames (g++ -O2 -g, inlining on), frame pointers" \
	-e cpu-clock:u -F 1000 -g -- "$CXXBIN/cxx-scope" 0.4
record cxx-scope-dwarf "cxx-scope-dwarf: C++ scopes of inline frames (g++ -O2 -g, inlining on), DWARF unwinding" \
	-e cpu-clock:u -F 1000 --call-graph dwarf,4096 -- "$CXXBIN/cxx-scope" 0.4
# the .plt section's file offset and size (hex)
read -r plt_off plt_size < <(readelf -SW "$PLTBIN/splt" | sed 's/^ *\[ *[0-9]*\]//' |
	awk '$1 == ".plt" { print $4, $5 }')
for try in 1 2 3 4 5 6 7 8; do
	record static-plt "static-plt: samples in a static binary's .plt (IRELATIVE slots of IFUNC'ed string functions)" \
		-e cpu-clock:u -F 20000 -g -- "$PLTBIN/splt" 0.5
	hit=$(perf script -i testdata/cases/static-plt/perf.data -F ip 2>/dev/null |
		python3 -c 'import sys
lo, n = int(sys.argv[1], 16), int(sys.argv[2], 16)
print(len({(int(l, 16) - lo) // 8 for l in sys.stdin.read().split() if lo <= int(l, 16) < lo + n}))' "$plt_off" "$plt_size")
	log "static-plt try $try: samples in $hit .plt entries"
	[ "$hit" -ge 3 ] && break
done
[ "$hit" -ge 3 ] || die "static-plt: fewer than 3 .plt entries sampled"

printf 'inline|--inline|--inline||compat-only\n' > testdata/cases/cxx-scope/variants
printf 'inline|--inline|--inline||compat-only\n' > testdata/cases/cxx-scope-dwarf/variants
printf 'addrs|--addrs||--addrs\n' > testdata/cases/static-plt/variants
for c in cxx-scope cxx-scope-dwarf static-plt; do
	dir=testdata/cases/$c
	scripts/oracle.sh "$dir" > "$dir/expected.folded"
	while IFS='|' read -r vname _kargs pargs cargs _mode; do
		# shellcheck disable=SC2086
		scripts/oracle.sh "$dir" $pargs -- $cargs > "$dir/expected.$vname.folded"
	done < "$dir/variants"
done
ls -la testdata/cases/cxx-scope*/perf.data testdata/cases/static-plt/perf.data "$symfs$CXXBIN" "$symfs$PLTBIN"
