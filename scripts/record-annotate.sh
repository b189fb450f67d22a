#!/usr/bin/env bash
# Record the captures of testdata/annotate/: per-instruction sample counts
# for `kfold annotate`, checked against perf annotate by
# scripts/annotate-oracle.py (src/tests/annotate.sh).  They cover what the
# committed cases do not: a stripped binary with a separate debug file, a
# clang frame-pointer build, a gcc frame-pointer build recorded with -z.
#
# usage: scripts/record-annotate.sh [CASE...]   (default: all three)
#
# Needs perf 6.1 (perf_event_paranoid <= 2 is enough: user-space events
# only), gcc 12, clang 14, objcopy, readelf, taskset.  Run it from
# anywhere: it builds from the repository root, with
# -fdebug-prefix-map=ROOT=., so the binaries (and their build-ids) do not
# depend on where the checkout is.
#
# Every case is testdata/src/annotate/annot.c (hot loops of different kinds:
# see the file) built into /tmp/kfold-fx/annot/NAME, the path the capture
# records, and run pinned to CPU 1 for 0.3 s:
#   stripped   gcc -O2 -g; the recorded binary is stripped to .dynsym
#              (objcopy --strip-debug --strip-unneeded), its symbols and
#              DWARF are in a separate debug file (objcopy --only-keep-debug)
#              found by build-id: symfs/usr/lib/debug/.build-id/xx/yyyy.debug;
#              perf record -e task-clock:u, no callchains
#   clang-fp   clang -O2 -g -fno-omit-frame-pointer; perf record -e
#              cpu-clock:u -g
#   gcc-fp-z   gcc -O2 -g -fno-omit-frame-pointer; perf record -e
#              cpu-clock:u -g -z (zstd-compressed records; perf 6.1 then
#              writes no BUILD_ID feature, so no build-id is recorded)
# all with -N (no build-id cache) and -F 2000.
#
# Each testdata/annotate/NAME/ gets perf.data, README (the exact commands)
# and symfs/ with the binary under its recorded path (and the stripped
# case's debug file).  libc and ld.so are not in there: a case symfs is
# read alone (src/tests/lib.sh, kf_case), kfold confines every path,
# symbolic links included, to the symfs (openat2 RESOLVE_IN_ROOT), and a
# third copy of the 2 MB libc is not worth its few samples.  Both kfold and
# perf then leave libc's samples unannotated; the committed cases cover
# libc (syscall, zstd, dwarf-qsort).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$script_dir")
cd "$root"
export LC_ALL=C
BIN=/tmp/kfold-fx/annot
SRC=testdata/src/annotate/annot.c
SECONDS_RUN=0.3

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'record-annotate.sh: %s\n' "$*" >&2; exit 1; }

for tool in perf gcc clang objcopy readelf taskset; do
	command -v "$tool" >/dev/null || die "$tool not found"
done

cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(stripped clang-fp gcc-fp-z)

bid() { readelf -n "$1" | sed -n 's/^ *Build ID: *//p'; }

warn=(-Wall -Wextra -Werror)
prefix=("-fdebug-prefix-map=$root=.")

# record NAME DESCRIPTION BUILD-COMMANDS(one string, for the README) PERF-ARGS...
record() {
	local name=$1 desc=$2 build=$3 dir=testdata/annotate/$1
	shift 3
	mkdir -p "$dir"
	rm -f "$dir/perf.data"
	{
		printf '%s\n' "$desc"
		printf 'built with (cwd = repository root; scripts/record-annotate.sh):\n'
		printf '%s\n' "$build"
		printf 'recorded with (cwd = case directory):\n '
		printf ' %q' taskset -c 1 perf record -N -o perf.data "$@" -- "$BIN/$name" "$SECONDS_RUN"
		printf '\n'
	} > "$dir/README"
	(cd "$dir" && taskset -c 1 perf record -N -o perf.data "$@" -- "$BIN/$name" "$SECONDS_RUN") \
		> /dev/null 2>&1 || die "$name: perf record failed"
	mkdir -p "$dir/symfs$BIN"
	cp "$BIN/$name" "$dir/symfs$BIN/$name"
	# perf 6.1 writes no BUILD_ID feature into a -z capture (and its MMAP2
	# records carry none without --buildid-mmap): the path alone then
	perf buildid-list -i "$dir/perf.data" 2>/dev/null |
		grep -Eq "^($(bid "$BIN/$name")| *) $BIN/$name\$" ||
		die "$name: the capture does not record $BIN/$name (with its build-id)"
	log "$name: $(stat -c %s "$dir/perf.data") bytes"
	[ "$(stat -c %s "$dir/perf.data")" -lt 300000 ] || die "$name: perf.data is 300 KB or more"
}

mkdir -p "$BIN"
# printed into the READMEs as run (ROOT is the repository root)
q() { local s; s=$(printf ' %q' "$@"); printf '%s\n' "  ${s# }" | sed "s|$root|ROOT|g"; }

for c in "${cases[@]}"; do
	case $c in
	stripped)
		full=$BIN/stripped.full
		cmd1=(gcc -std=gnu11 -O2 -g "${prefix[@]}" "${warn[@]}" -o "$full" "$SRC")
		cmd2=(objcopy --only-keep-debug "$full" "$BIN/stripped.debug")
		cmd3=(objcopy --strip-debug --strip-unneeded "$full" "$BIN/stripped")
		"${cmd1[@]}"; "${cmd2[@]}"; "${cmd3[@]}"
		readelf -SW "$BIN/stripped" | grep -q ' \.symtab ' && die "stripped still has .symtab"
		record stripped \
			"stripped: gcc -O2 -g, the recorded binary stripped to .dynsym; symbols and DWARF in a separate debug file found by build-id" \
			"$(q "${cmd1[@]}"; q "${cmd2[@]}"; q "${cmd3[@]}")" \
			-e task-clock:u -F 2000
		b=$(bid "$BIN/stripped")
		dbg=testdata/annotate/stripped/symfs/usr/lib/debug/.build-id/${b:0:2}/${b:2}.debug
		mkdir -p "$(dirname "$dbg")"
		cp "$BIN/stripped.debug" "$dbg"
		;;
	clang-fp)
		cmd1=(clang -std=gnu11 -O2 -g -fno-omit-frame-pointer "${prefix[@]}" "${warn[@]}"
			-o "$BIN/clang-fp" "$SRC")
		"${cmd1[@]}"
		record clang-fp "clang-fp: clang -O2 -g -fno-omit-frame-pointer, frame-pointer callchains" \
			"$(q "${cmd1[@]}")" -e cpu-clock:u -F 2000 -g
		;;
	gcc-fp-z)
		cmd1=(gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer "${prefix[@]}" "${warn[@]}"
			-o "$BIN/gcc-fp-z" "$SRC")
		"${cmd1[@]}"
		record gcc-fp-z "gcc-fp-z: gcc -O2 -g -fno-omit-frame-pointer, frame-pointer callchains, zstd-compressed records (-z)" \
			"$(q "${cmd1[@]}")" -e cpu-clock:u -F 2000 -g -z
		;;
	*) die "unknown case $c (stripped, clang-fp, gcc-fp-z)" ;;
	esac
done
du -sh testdata/annotate/* >&2
