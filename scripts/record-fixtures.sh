#!/usr/bin/env bash
# Rebuild kfold's fixture programs and re-record the committed test captures.
#
# usage: scripts/record-fixtures.sh [CASE...]
#
# With no arguments every case is recorded.  Naming cases re-records only
# those; testdata/symfs and testdata/kallsyms.zst are refreshed either way
# and every expected.folded is rewritten by scripts/oracle.sh.  Recording
# only some cases after a system library or kernel changed leaves the other
# captures inconsistent with the new symfs/kallsyms: record everything then.
#
# Needs: root (kernel samples, /proc/kallsyms addresses, -a), perf 6.1
# (tested with 6.1.187, software events only), gcc, zstd, objcopy, readelf,
# taskset, python3; for the rust-* cases Debian's rustc 1.63 (apt-get install
# rustc; $RUSTC picks another one, default /usr/bin/rustc, else rustc in
# PATH).  Only this script needs rustc: the tests read the committed
# captures and the binaries in testdata/symfs.  Writes:
#   /tmp/kfold-fx/bin/*            fixture binaries (fixed path: it is recorded
#                                  in the captures and mirrored in the symfs)
#   /tmp/kfold-fx/logs/*           perf record / perf script logs
#   testdata/cases/<case>/{perf.data,args,README,expected.folded[,...]}
#   testdata/symfs/                copies of every user-space ELF in a frame
#   testdata/kallsyms.zst          /proc/kallsyms at record time
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$script_dir")
src=$root/testdata/src
cases_dir=$root/testdata/cases
symfs=$root/testdata/symfs

FX=/tmp/kfold-fx
BIN=$FX/bin
LOGS=$FX/logs
CFLAGS=(-std=gnu11 -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
	-fno-optimize-sibling-calls -fno-inline -Wall -Wextra -Werror)
# The DWARF fixtures (testdata/src/dwarf/dw-*.c) are built WITHOUT frame
# pointers, as gcc does by default at -O2 on x86_64; their call paths are kept
# by noipa attributes and by having no tail calls in the source, not by flags.
# A name ending in -i386 (dw-i386.c) is built with -m32 (gcc-multilib).
# dw-nocfi.c is built twice, without unwind tables (no .eh_frame for its
# functions): dw-nocfi with frame pointers and its .debug_frame removed (no
# CFI anywhere: frame-pointer steps only), dw-dbgframe without frame pointers
# and with its .debug_frame only in a separate debug file ($FX/debug, put
# into the symfs under /usr/lib/debug/.build-id; the recorded binary is
# stripped of its debug sections).
CFLAGS_NOFP=(-std=gnu11 -O2 -g -fomit-frame-pointer -Wall -Wextra -Werror)
CFLAGS_NOCFI=(-fno-asynchronous-unwind-tables -fno-unwind-tables)
# The Rust fixture (testdata/src/rust/rs-names.rs), built twice: rs-legacy
# with rustc's default (legacy) symbol mangling, rs-v0 with v0 mangling
# (-C symbol-mangling-version=v0 is stable in 1.63; naming legacy explicitly
# would need -Z unstable-options, so legacy is left as the default).
# -C prefer-dynamic links Debian's libstd-*.so instead of the static std,
# whose DWARF would make each binary 12 MB; the .so (5.6 MB) stays out of
# the symfs (build_symfs skips files over 3 MB), so perf and kfold both
# show its frames as [libstd-….so].  --remap-path-prefix keeps the
# checkout's path out of the binaries.
RUSTC=${RUSTC:-$(command -v /usr/bin/rustc || command -v rustc || true)}
RUSTFLAGS_FX=(--edition 2021 --crate-name rs_names -C opt-level=2 -g
	-C debuginfo=2 -C force-frame-pointers=yes -C prefer-dynamic)

ALL_CASES=(syscall threads forkexec system twoevents pipe zstd switch killed
	nocallchain changed jit cxx ordering
	dwarf-recursion dwarf-threads dwarf-qsort dwarf-syscall dwarf-zstd
	dwarf-small dwarf-vs-fp dwarf-i386 dwarf-nocfi dwarf-dbgframe dwarf-jit
	dwarf-deep inline-dwarf inline-dwz inline-clang inline-O0 rust-legacy rust-v0)

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'record-fixtures.sh: %s\n' "$*" >&2; exit 1; }

for tool in perf gcc g++ zstd objcopy readelf taskset python3; do
	command -v "$tool" >/dev/null || die "$tool not found"
done
[ "$(id -u)" = 0 ] || die "run as root"
# The captures and the symfs mirror system paths: force English perf output.
export LC_ALL=C

if [ $# -gt 0 ]; then
	selected=("$@")
	for c in "${selected[@]}"; do
		case " ${ALL_CASES[*]} " in
		*" $c "*) ;;
		*) die "unknown case $c (cases: ${ALL_CASES[*]})" ;;
		esac
	done
else
	selected=("${ALL_CASES[@]}")
fi
want() { case " ${selected[*]} " in *" $1 "*) return 0 ;; esac; return 1; }

# dwarf-i386 needs a 32-bit toolchain and, for the symfs (refreshed on every
# run from the files on this machine), the i386 libc and its debug file:
#   apt-get install gcc-multilib
#   dpkg --add-architecture i386 && apt-get update && apt-get install libc6-dbg:i386
# (libc6:i386 then provides /lib/ld-linux.so.2, so a -m32 program runs with
# /usr/lib/i386-linux-gnu/libc.so.6, whose debug file libc6-dbg:i386 has.)
HAVE_M32=
if printf 'int main(void){return 0;}\n' |
	gcc -m32 -x c -o /dev/null - 2>/dev/null; then
	HAVE_M32=1
fi
if want rust-legacy || want rust-v0; then
	[ -n "$RUSTC" ] || die "the rust-* cases need rustc (apt-get install rustc)"
fi
if want dwarf-i386 || [ -f "$cases_dir/dwarf-i386/perf.data" ]; then
	[ -n "$HAVE_M32" ] || die "dwarf-i386 needs gcc -m32 (apt-get install gcc-multilib)"
	dpkg-query -W -f='${Status}' libc6-dbg:i386 2>/dev/null | grep -q 'install ok installed' ||
		die "dwarf-i386 needs libc6-dbg:i386 (dpkg --add-architecture i386, apt-get update, apt-get install libc6-dbg:i386)"
fi

# ---------------------------------------------------------------- build
build() {
	log "building fixtures into $BIN"
	rm -rf "$BIN" "$FX/changed-v2" "$FX/debug"
	mkdir -p "$BIN" "$LOGS" "$FX/changed-v2" "$FX/debug"
	local f name
	for f in "$src"/*.c; do
		name=$(basename "$f" .c)
		gcc "${CFLAGS[@]}" -o "$BIN/$name" "$f" -pthread
	done
	for f in "$src"/*.cpp; do
		name=$(basename "$f" .cpp)
		g++ "${CFLAGS[@]/-std=gnu11/-std=gnu++17}" -I "$src" -o "$BIN/$name" "$f"
	done
	# "changed": VERSION=1 is recorded, VERSION=2 goes into the case symfs.
	gcc "${CFLAGS[@]}" -DVERSION=1 -o "$BIN/changed" "$src/changed.c"
	gcc "${CFLAGS[@]}" -DVERSION=2 -o "$FX/changed-v2/changed" "$src/changed.c"
	# the inline test program (testdata/src/inline/inl.c): gcc -O2, clang -O2
	# and gcc -O0 (nothing inlined), default frame-pointer settings
	gcc -std=gnu11 -O2 -g -o "$BIN/inl-gcc-O2" "$src/inline/inl.c"
	gcc -std=gnu11 -O0 -g -o "$BIN/inl-gcc-O0" "$src/inline/inl.c"
	if command -v clang >/dev/null; then
		clang -std=gnu11 -O2 -g -o "$BIN/inl-clang-O2" "$src/inline/inl.c"
	fi
	# inl-dwz: the same program whose debug info dwz split the way Debian's
	# -dbgsym packages are: the binary is stripped of DWARF, its debug file
	# (/usr/lib/debug/.build-id) holds the rest and refers by
	# .gnu_debugaltlink to /usr/lib/debug/.dwz/kfold-inl.debug, which holds
	# what it shares with a twin build (-DDWZ_TWIN).  $FX/dwz keeps the
	# debug file before dwz too (inl-dwz.plain.debug), to compare with.
	if command -v dwz >/dev/null; then
		mkdir -p "$FX/dwz"
		# (-fno-ident: no .comment, so its build-id is not inl-gcc-O2's,
		# whose files share the symfs)
		gcc -std=gnu11 -O2 -g -fno-ident -o "$BIN/inl-dwz" "$src/inline/inl.c"
		gcc -std=gnu11 -O2 -g -DDWZ_TWIN -o "$FX/dwz/twin" "$src/inline/inl.c"
		objcopy --only-keep-debug "$BIN/inl-dwz" "$FX/dwz/inl-dwz.debug"
		objcopy --only-keep-debug "$FX/dwz/twin" "$FX/dwz/twin.debug"
		cp "$FX/dwz/inl-dwz.debug" "$FX/dwz/inl-dwz.plain.debug"
		dwz -m "$FX/dwz/kfold-inl.debug" -M /usr/lib/debug/.dwz/kfold-inl.debug \
			"$FX/dwz/inl-dwz.debug" "$FX/dwz/twin.debug"
		objcopy --strip-debug "$BIN/inl-dwz"
	fi
	# the Rust fixture, legacy and v0 mangling (see RUSTFLAGS_FX)
	if [ -n "$RUSTC" ]; then
		"$RUSTC" "${RUSTFLAGS_FX[@]}" --remap-path-prefix "$root=." \
			-o "$BIN/rs-legacy" "$src/rust/rs-names.rs"
		"$RUSTC" "${RUSTFLAGS_FX[@]}" --remap-path-prefix "$root=." \
			-C symbol-mangling-version=v0 -o "$BIN/rs-v0" "$src/rust/rs-names.rs"
	fi
	# DWARF fixtures: no frame pointers; *-i386 as 32-bit programs
	for f in "$src"/dwarf/dw-*.c; do
		name=$(basename "$f" .c)
		case $name in
		*-i386)
			[ -n "$HAVE_M32" ] || { log "  skip $name: no gcc -m32"; continue; }
			gcc -m32 "${CFLAGS_NOFP[@]}" -I "$src" -o "$BIN/$name" "$f" -pthread
			;;
		dw-nocfi)
			gcc "${CFLAGS[@]}" "${CFLAGS_NOCFI[@]}" -I "$src" -o "$BIN/dw-nocfi" "$f"
			objcopy -R .debug_frame "$BIN/dw-nocfi"
			gcc "${CFLAGS_NOFP[@]}" "${CFLAGS_NOCFI[@]}" -I "$src" -o "$BIN/dw-dbgframe" "$f"
			objcopy --only-keep-debug "$BIN/dw-dbgframe" "$FX/debug/dw-dbgframe.debug"
			objcopy --strip-debug "$BIN/dw-dbgframe"
			;;
		*) gcc "${CFLAGS_NOFP[@]}" -I "$src" -o "$BIN/$name" "$f" -pthread ;;
		esac
	done
}

# ---------------------------------------------------------------- record
# new_case NAME DESCRIPTION: empties the case directory
new_case() {
	local dir=$cases_dir/$1
	rm -rf "$dir"
	mkdir -p "$dir"
	: > "$dir/args"
	printf '%s\n' "$2" > "$dir/README"
}

# note_cmd NAME CMD...: appends the exact command to the case README
note_cmd() {
	local name=$1
	shift
	{
		printf 'recorded with (cwd = case directory):\n '
		printf ' %q' "$@"
		printf '\n'
	} >> "$cases_dir/$name/README"
}

# rec NAME PERF-RECORD-ARGS... -- WORKLOAD...: runs perf record in the case
# directory, writing perf.data there, pinned to CPU 1 unless PIN is empty.
PIN=1
rec() {
	local name=$1
	shift
	local dir=$cases_dir/$name
	local -a cmd=()
	[ -n "$PIN" ] && cmd=(taskset -c "$PIN")
	cmd+=(perf record -N -o perf.data "$@")
	note_cmd "$name" "${cmd[@]}"
	log "recording $name"
	(cd "$dir" && "${cmd[@]}") > "$LOGS/$name.stdout" 2> "$LOGS/$name.record.log"
}

record_cases() {
	local dir pid child mapfile

	if want syscall; then
		new_case syscall "syscall: write/getppid/clock_gettime loop, frame-pointer callchains"
		rec syscall -e cpu-clock -F 1000 -g -- "$BIN/syscall" 0.2
	fi

	if want ordering; then
		# a shell forking and exec'ing short programs on both CPUs: an
		# exec's COMM and MMAPs land in one CPU's buffer and the new
		# program's first samples in the other's, so file order is not
		# time order.  Re-recorded until it shows (kfold --file-order,
		# the capture read in file order, must fold differently).
		local kfold=$root/build/kfold try
		[ -x "$kfold" ] || die "ordering needs $kfold (meson compile -C build)"
		for try in 1 2 3 4 5 6 7 8 9 10; do
			new_case ordering "ordering: fork+exec on both CPUs, where time order matters (try $try)"
			PIN='' rec ordering -e cpu-clock -F 2000 -g -- sh "$src/ordering.sh"
			printf 'addrs|--addrs||--addrs\n' > "$cases_dir/ordering/variants"
			if ! cmp -s <("$kfold" -q --no-inline "$cases_dir/ordering/perf.data") \
				    <("$kfold" -q --no-inline --file-order "$cases_dir/ordering/perf.data"); then
				break
			fi
		done
	fi

	if want cxx; then
		new_case cxx "cxx: C++ namespaces, templates, a lambda, a virtual call, std::sort (demangled names)"
		rec cxx -e cpu-clock -F 1000 -g -- "$BIN/cxx" 0.2
	fi

	if want threads; then
		new_case threads "threads: three named threads (alpha-worker, \"beta worker\", gamma_sys) + main"
		PIN='' rec threads -e cpu-clock -F 700 -g -- "$BIN/threads" 0.15
	fi

	if want forkexec; then
		new_case forkexec "forkexec: parent works while the forked child execs forkexec-child"
		PIN='' rec forkexec -e cpu-clock -F 1000 -g -- "$BIN/forkexec" 0.15
	fi

	if want system; then
		# CPU 0 is left idle: on this VM only CPU 0 gives swapper samples.
		new_case system "system: system-wide -a -g capture while syscall runs on CPU 1"
		dir=$cases_dir/system
		taskset -c 1 "$BIN/syscall" 0.6 &
		pid=$!
		sleep 0.1
		PIN='' rec system -e cpu-clock -F 500 -a -g -- sleep 0.2
		wait "$pid"
		printf 'while this ran in the background (started 0.1 s before):\n  taskset -c 1 %s 0.6\n' \
			"$BIN/syscall" >> "$dir/README"
	fi

	if want twoevents; then
		new_case twoevents "twoevents: cpu-clock and page-faults with callchains, page-touching program"
		rec twoevents -e cpu-clock -e page-faults -F 1000 -g -- "$BIN/pagefault" 0.2
	fi

	if want pipe; then
		new_case pipe "pipe: pipe-mode stream (perf record -o -) saved to a file"
		dir=$cases_dir/pipe
		local -a cmd=(taskset -c 1 perf record -N -e cpu-clock -F 1000 -g -o - -- "$BIN/compute" 0.2)
		note_cmd pipe "${cmd[@]}"
		printf '  (stdout redirected to perf.data)\n' >> "$dir/README"
		log "recording pipe"
		(cd "$dir" && "${cmd[@]}" > perf.data) 2> "$LOGS/pipe.record.log"
	fi

	if want zstd; then
		new_case zstd "zstd: compressed (-z) capture"
		rec zstd -e cpu-clock -F 1000 -g -z -- "$BIN/compute" 0.2
	fi

	if want switch; then
		new_case switch "switch: --switch-events capture of a program that sleeps 0.3 ms between bursts"
		rec switch -e cpu-clock -F 1000 -g --switch-events -- "$BIN/sleeper" 0.25
	fi

	if want killed; then
		new_case killed "killed: perf record killed with SIGKILL after ~0.5 s (header data.size == 0)"
		dir=$cases_dir/killed
		# Small ring buffers (8 pages) so perf writes data out several times
		# before it dies; the workload (1.5 s) outlives perf.
		local -a cmd=(taskset -c 1 perf record -N -e cpu-clock -F 1000 -g -m 8 -o perf.data -- "$BIN/compute" 1.5)
		note_cmd killed "${cmd[@]}"
		printf '  ... then after 0.5 s: kill -KILL <perf pid>\n' >> "$dir/README"
		log "recording killed"
		(cd "$dir" && exec "${cmd[@]}") > "$LOGS/killed.stdout" 2> "$LOGS/killed.record.log" &
		pid=$!
		sleep 0.5
		child=$(ps -o pid= --ppid "$pid" | head -n1 | tr -d ' ' || true)
		kill -KILL "$pid"
		wait "$pid" 2>/dev/null || true
		if [ -n "$child" ]; then
			while kill -0 "$child" 2>/dev/null; do sleep 0.05; done
		fi
	fi

	if want nocallchain; then
		new_case nocallchain "nocallchain: no -g, samples carry only the IP"
		rec nocallchain -e cpu-clock -F 1000 -- "$BIN/compute" 0.2
	fi

	if want changed; then
		new_case changed "changed: records changed v1; the case symfs holds a rebuilt v2 (other build-id)"
		rec changed -e cpu-clock -F 1000 -g -- "$BIN/changed" 0.2
	fi

	if want jit; then
		new_case jit "jit: anonymous RX code described by /tmp/perf-<pid>.map (committed here)"
		dir=$cases_dir/jit
		rec jit -e cpu-clock -F 1000 -g -- "$BIN/jit" 0.2
		pid=$(sed -n 's/^pid \([0-9][0-9]*\)$/\1/p' "$LOGS/jit.stdout")
		[ -n "$pid" ] || die "jit: no pid in $LOGS/jit.stdout"
		mapfile=/tmp/perf-$pid.map
		[ -f "$mapfile" ] || die "jit: $mapfile missing"
		cp "$mapfile" "$dir/perf-$pid.map"
		rm -f "$mapfile"
		printf 'the program wrote %s; it is committed as perf-%s.map\n' "$mapfile" "$pid" >> "$dir/README"
	fi

	# ---- DWARF captures (--call-graph dwarf) of programs without frame
	# pointers.  Each sample carries the user registers and a copy of the
	# top of the user stack (4096 bytes unless said otherwise): about 4.4 KB.
	if want dwarf-recursion; then
		new_case dwarf-recursion "dwarf-recursion: recursion to depth 8/24/40/56 (~112-byte frames), no frame pointers; deep stacks exceed the 4096-byte copy"
		rec dwarf-recursion -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/dw-recursion" 0.2
	fi

	if want dwarf-threads; then
		new_case dwarf-threads "dwarf-threads: three named threads (dw-alpha, dw-beta, dw-gamma) + main, no frame pointers"
		rec dwarf-threads -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/dw-threads" 0.2
	fi

	if want dwarf-qsort; then
		new_case dwarf-qsort "dwarf-qsort: program -> libc qsort -> program comparator -> helper, no frame pointers"
		rec dwarf-qsort -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/dw-qsort" 0.2
	fi

	if want dwarf-syscall; then
		new_case dwarf-syscall "dwarf-syscall: write/read/getppid loop, no frame pointers; kernel chain + DWARF-unwound user part"
		rec dwarf-syscall -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/dw-syscall" 0.2
	fi

	if want dwarf-zstd; then
		new_case dwarf-zstd "dwarf-zstd: dw-recursion recorded with --call-graph dwarf,4096 and -z (zstd-compressed records)"
		rec dwarf-zstd -e cpu-clock -F 1000 --call-graph dwarf,4096 -z -- "$BIN/dw-recursion" 0.2
	fi

	if want dwarf-small; then
		new_case dwarf-small "dwarf-small: dw-recursion with a 512-byte stack copy (--call-graph dwarf,512): unwinds end early"
		rec dwarf-small -e cpu-clock -F 1000 --call-graph dwarf,512 -- "$BIN/dw-recursion" 0.2
	fi

	if want dwarf-vs-fp; then
		new_case dwarf-vs-fp "dwarf-vs-fp: dw-qsort (no frame pointers, as in dwarf-qsort) recorded with -g: broken frame-pointer chains"
		rec dwarf-vs-fp -e cpu-clock -F 1000 -g -- "$BIN/dw-qsort" 0.2
	fi

	if want dwarf-nocfi; then
		new_case dwarf-nocfi "dwarf-nocfi: frame pointers but no CFI at all in the program (no .eh_frame, no .debug_frame), --call-graph dwarf,4096"
		rec dwarf-nocfi -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/dw-nocfi" 0.2
	fi

	if want dwarf-dbgframe; then
		new_case dwarf-dbgframe "dwarf-dbgframe: no frame pointers, no .eh_frame; CFI only as .debug_frame in the separate debug file, --call-graph dwarf,4096"
		rec dwarf-dbgframe -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/dw-dbgframe" 0.2
	fi

	if want dwarf-jit; then
		new_case dwarf-jit "dwarf-jit: the jit program (anonymous RX code with frame pointers, /tmp/perf-<pid>.map committed here) recorded with --call-graph dwarf,4096"
		dir=$cases_dir/dwarf-jit
		rec dwarf-jit -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/jit" 0.2
		pid=$(sed -n 's/^pid \([0-9][0-9]*\)$/\1/p' "$LOGS/dwarf-jit.stdout")
		[ -n "$pid" ] || die "dwarf-jit: no pid in $LOGS/dwarf-jit.stdout"
		mapfile=/tmp/perf-$pid.map
		[ -f "$mapfile" ] || die "dwarf-jit: $mapfile missing"
		cp "$mapfile" "$dir/perf-$pid.map"
		rm -f "$mapfile"
		printf 'the program wrote %s; it is committed as perf-%s.map\n' "$mapfile" "$pid" >> "$dir/README"
	fi

	if want dwarf-deep; then
		new_case dwarf-deep "dwarf-deep: recursion 200 deep (perf keeps 127 frames), no frame pointers, --call-graph dwarf,8192"
		rec dwarf-deep -e cpu-clock -F 1000 --call-graph dwarf,8192 -- "$BIN/dw-deep" 0.1
	fi

	if want inline-dwarf; then
		new_case inline-dwarf "inline-dwarf: inl (gcc -O2: most hot code inlined) recorded with --call-graph dwarf,4096"
		rec inline-dwarf -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/inl-gcc-O2" 0.2
		# inline expansion against perf's, in both modes (the default
		# mode with corrections.inline)
		printf 'inline|--inline|--inline||\n' > "$cases_dir/inline-dwarf/variants"
	fi

	if want inline-clang; then
		new_case inline-clang "inline-clang: inl (clang -O2: most hot code inlined, DWARF 5) recorded with --call-graph dwarf,4096"
		rec inline-clang -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/inl-clang-O2" 0.2
		# binutils' addr2line drops clang's inner inline levels: perf's
		# inline output is wrong here (README of the case)
		printf 'inline|--inline|--inline||perf-wrong\n' > "$cases_dir/inline-clang/variants"
	fi

	if want inline-O0; then
		new_case inline-O0 "inline-O0: inl (gcc -O0: nothing inlined, the control) recorded with --call-graph dwarf,4096"
		rec inline-O0 -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/inl-gcc-O0" 0.2
	fi

	if want inline-dwz; then
		[ -f "$FX/dwz/kfold-inl.debug" ] || die "inline-dwz needs dwz (apt-get install dwz)"
		new_case inline-dwz "inline-dwz: inl (gcc -O2) whose DWARF is in a dwz-split debug file (see build), --call-graph dwarf,4096"
		rec inline-dwz -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/inl-dwz" 0.2
	fi

	if want rust-legacy; then
		new_case rust-legacy "rust-legacy: Rust modules, generics, a trait with a dyn call, a closure in Iterator::map; legacy mangling ($("$RUSTC" --version))"
		rec rust-legacy -e cpu-clock -F 1000 -g -- "$BIN/rs-legacy" 0.2
		printf 'addrs|--addrs||--addrs\n' > "$cases_dir/rust-legacy/variants"
	fi

	if want rust-v0; then
		new_case rust-v0 "rust-v0: the rust-legacy program built with -C symbol-mangling-version=v0 ($("$RUSTC" --version))"
		rec rust-v0 -e cpu-clock -F 1000 -g -- "$BIN/rs-v0" 0.2
		printf 'addrs|--addrs||--addrs\n' > "$cases_dir/rust-v0/variants"
	fi

	if want dwarf-i386; then
		new_case dwarf-i386 "dwarf-i386: 32-bit (-m32) recursion + libc qsort, no frame pointers, --call-graph dwarf,4096"
		rec dwarf-i386 -e cpu-clock -F 1000 --call-graph dwarf,4096 -- "$BIN/dw-i386" 0.2
	fi
}

# ---------------------------------------------------------------- symfs
# copy_elf PATH DESTROOT: copies PATH (and, if the system has one, its
# /usr/lib/debug/.build-id debug file with the DWARF sections stripped:
# perf only needs its .symtab) under DESTROOT.
copy_elf() {
	local path=$1 dest=$2 bid dbg
	mkdir -p "$dest$(dirname "$path")"
	cp -L "$path" "$dest$path"
	bid=$(readelf -n "$path" 2>/dev/null | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -n1)
	if [ -n "$bid" ]; then
		dbg=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
		if [ -f "$dbg" ]; then
			mkdir -p "$dest$(dirname "$dbg")"
			objcopy --strip-debug "$dbg" "$dest$dbg"
		fi
	fi
}

# frame_dsos CASE_DIR: absolute DSO paths that appear in perf script frames
frame_dsos() {
	# (perf 6.1 cannot read the killed capture: its DSOs are compute's.)
	{ HOME=$FX/home PERF_CONFIG=$FX/perfconfig perf --buildid-dir "$FX/emptycache" \
		script -i "$1/perf.data" -F ip,dso 2>/dev/null || true; } |
		python3 -c '
import re, sys
seen = set()
for line in sys.stdin:
    m = re.search(r"\((/.*)\)\s*$", line)
    if m and m.group(1) not in seen:
        seen.add(m.group(1))
        print(m.group(1))
'
}

# mmap_dsos CASE_DIR: absolute paths of the executable file mappings
# (MMAP/MMAP2 events) in a capture.  Used for the DWARF cases only: an
# unwinder needs every mapped ELF, also one perf shows no frame in (perf 6.1
# cannot unwind the 32-bit dwarf-i386 samples at all, so its frames show
# neither the program nor the i386 libc).
mmap_dsos() {
	{ HOME=$FX/home PERF_CONFIG=$FX/perfconfig perf --buildid-dir "$FX/emptycache" \
		script -i "$1/perf.data" --show-mmap-events -F comm 2>/dev/null || true; } |
		python3 -c '
import re, sys
seen = set()
for line in sys.stdin:
    m = re.search(r"PERF_RECORD_MMAP2? .*\]: (?:[r-][w-]x[ps]|x) (/.*?)\s*$", line)
    if m and m.group(1) not in seen:
        seen.add(m.group(1))
        print(m.group(1))
'
}

build_symfs() {
	log "refreshing $symfs"
	# the aarch64 binaries come from scripts/record-aarch64.sh (a cross
	# compiler): kept as they are
	local keep=$FX/keep-aarch64
	rm -rf "$keep"
	mkdir -p "$keep"
	cp -a "$symfs$BIN"/dw-arm64* "$keep"/ 2>/dev/null || true
	rm -rf "${symfs:?}" "${FX:?}/home" "${FX:?}/emptycache"
	mkdir -p "$symfs" "$FX/home" "$FX/emptycache" "$symfs$BIN"
	cp -a "$keep"/. "$symfs$BIN"/
	local c path size
	: > "$FX/dsos.txt"
	for c in "${ALL_CASES[@]}"; do
		[ -f "$cases_dir/$c/perf.data" ] || continue
		frame_dsos "$cases_dir/$c" | while read -r path; do
			printf '%s %s\n' "$c" "$path"
		done >> "$FX/dsos.txt"
		case $c in
		dwarf-*)
			mmap_dsos "$cases_dir/$c" | while read -r path; do
				printf '%s %s\n' "$c" "$path"
			done >> "$FX/dsos.txt"
			;;
		esac
	done
	sort -u -k2,2 "$FX/dsos.txt" | while read -r c path; do
		case $path in
		/tmp/perf-*.map) continue ;;
		esac
		if [ ! -f "$path" ]; then
			log "  skip $path (from $c): not a regular file here"
			continue
		fi
		if ! head -c4 "$path" | grep -q 'ELF'; then
			log "  skip $path (from $c): not ELF"
			continue
		fi
		# Only the system-wide case sees other programs: keep to libraries
		# and to files that are not huge.
		size=$(stat -c %s "$path")
		case $path in
		"$BIN"/* | *.so | *.so.*) ;;
		*)
			log "  skip $path (from $c): not a fixture binary or library"
			continue
			;;
		esac
		if [ "$size" -gt 3000000 ]; then
			log "  skip $path (from $c): $size bytes"
			continue
		fi
		copy_elf "$path" "$symfs"
	done
	# "changed": the shared symfs holds the rebuilt v2 under the recorded
	# name (no other case runs that binary), so the recorded v1 build-id
	# does not match.  No case has a symfs of its own: a symlink from one
	# symfs into another would leave the --symfs root, which kfold refuses.
	if [ -f "$cases_dir/changed/perf.data" ]; then
		mkdir -p "$symfs$BIN"
		cp "$FX/changed-v2/changed" "$symfs$BIN/changed"
	fi
	# the inline test binaries, also those no capture runs
	for path in "$BIN"/inl-*; do
		[ -f "$path" ] && copy_elf "$path" "$symfs"
	done
	# inl-dwz's split debug info, and its debug file before dwz (testdata/dwz)
	if [ -f "$cases_dir/inline-dwz/perf.data" ]; then
		local dbid
		dbid=$(readelf -n "$BIN/inl-dwz" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -n1)
		mkdir -p "$symfs/usr/lib/debug/.build-id/${dbid:0:2}" "$symfs/usr/lib/debug/.dwz" "$root/testdata/dwz"
		cp "$FX/dwz/inl-dwz.debug" "$symfs/usr/lib/debug/.build-id/${dbid:0:2}/${dbid:2}.debug"
		cp "$FX/dwz/kfold-inl.debug" "$symfs/usr/lib/debug/.dwz/kfold-inl.debug"
		cp "$FX/dwz/inl-dwz.plain.debug" "$root/testdata/dwz/inl-dwz.plain.debug"
	fi
	# dw-dbgframe's CFI lives only in its debug file
	if [ -f "$cases_dir/dwarf-dbgframe/perf.data" ]; then
		local bid dbg
		bid=$(readelf -n "$BIN/dw-dbgframe" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -n1)
		[ -n "$bid" ] || die "dw-dbgframe has no build-id"
		dbg=$symfs/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
		mkdir -p "$(dirname "$dbg")"
		cp "$FX/debug/dw-dbgframe.debug" "$dbg"
	fi
}

# ---------------------------------------------------------------- main
mkdir -p "$LOGS"
build
: > "$FX/perfconfig"	# empty perf config (PERF_CONFIG makes perf read only it)
log "saving /proc/kallsyms"
cp /proc/kallsyms "$FX/kallsyms"
grep -q ' T _text$' "$FX/kallsyms" || die "/proc/kallsyms has no _text"
[ "$(awk '$3 == "_text" { print $1; exit }' "$FX/kallsyms")" != 0000000000000000 ] ||
	die "/proc/kallsyms addresses are hidden (kptr_restrict?)"
record_cases
zstd -19 -qf "$FX/kallsyms" -o "$root/testdata/kallsyms.zst"
chmod 644 "$root/testdata/kallsyms.zst"
build_symfs
# Afterwards the binary at the recorded path is v2, as in the case's symfs.
if want changed; then
	cp "$FX/changed-v2/changed" "$BIN/changed"
fi

# ---------------------------------------------------------------- check
status=0
for c in "${ALL_CASES[@]}"; do
	dir=$cases_dir/$c
	[ -f "$dir/perf.data" ] || continue
	# 1. plain perf script must read the capture (perf 6.1 refuses the
	#    killed one: data.size 0; the oracle reads a fixed-up copy)
	if HOME=$FX/home PERF_CONFIG=$FX/perfconfig perf --buildid-dir "$FX/emptycache" \
		script -i "$dir/perf.data" > /dev/null 2> "$LOGS/$c.script.err"; then
		[ "$c" != killed ] || log "killed: perf script unexpectedly read it"
	elif [ "$c" != killed ]; then
		log "$c: perf script FAILED (see $LOGS/$c.script.err)"
		status=1
	fi
	# 2. the oracle writes the expected output
	"$script_dir/oracle.sh" "$dir" > "$dir/expected.folded" 2> "$LOGS/$c.oracle.err" || {
		log "$c: oracle FAILED (see $LOGS/$c.oracle.err)"
		status=1
	}
	# every DWARF capture (and dwarf-vs-fp, whose fp chains perf must not
	# expand) is compared with perf's inline expansion too
	if { grep -q 'call-graph dwarf' "$dir/README" || [ "$c" = dwarf-vs-fp ]; } &&
	   ! grep -q '^inline|' "$dir/variants" 2>/dev/null; then
		printf 'inline|--inline|--inline||compat-only\n' >> "$dir/variants"
	fi
	# option variants (CASE/variants: NAME|kfold args|perf script args|collapse args)
	if [ -f "$dir/variants" ]; then
		while IFS='|' read -r vname _kargs pargs cargs _mode; do
			# shellcheck disable=SC2086
			"$script_dir/oracle.sh" "$dir" $pargs -- $cargs \
				> "$dir/expected.$vname.folded" 2>> "$LOGS/$c.oracle.err" || status=1
		done < "$dir/variants"
	fi
	# no callchain: the default mode's oracle is perf script's one-line output
	if [ "$c" = nocallchain ]; then
		ORACLE_FOLD=oneline "$script_dir/oracle.sh" "$dir" \
			> "$dir/expected.oneline.folded" 2>> "$LOGS/$c.oracle.err" || status=1
	fi
	if [ ! -s "$dir/expected.folded" ] && [ "$c" != nocallchain ]; then
		log "$c: expected.folded is empty"
		status=1
	fi
	printf '%-12s %8s bytes perf.data, %4s stacks, %s\n' "$c" \
		"$(stat -c %s "$dir/perf.data")" "$(wc -l < "$dir/expected.folded")" \
		"$(if [ -s "$LOGS/$c.script.err" ]; then echo "perf script stderr: $(head -c 120 "$LOGS/$c.script.err" | tr '\n' ' ')"; else echo "perf script clean"; fi)" >&2
done
du -sh "$root/testdata" >&2
exit "$status"
