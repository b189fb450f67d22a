#!/usr/bin/env bash
# loads.sh SRCDIR TEST-LOADS: symbol files are loaded at the load steps
# only (test-loads.c), on committed captures that exercise each step: the
# kernel's kallsyms at the first kernel frame, the unwinder's CFI and
# --compat=perf --inline's addr2line view while the samples are read,
# kfold's own DWARF names and lines (and a dwz file), JIT maps, kernel
# context classification (syscall) and the prepare step for the rest.
# About 1 s: each run reads the kallsyms snapshot.
set -euo pipefail
src=$1
test_loads=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"

run() {
	local case=$1
	shift
	"$test_loads" "$src/testdata/cases/$case/perf.data" \
		"$(kf_symfs "$src/testdata/cases/$case")" "$KF_KALLSYMS" "$KF_NOCACHE" "$@"
}

run dwarf-qsort
run dwarf-qsort --srcline
run dwarf-qsort --compat=perf --inline
run inline-dwz
run inline-dwz --compat=perf --inline
run dwarf-jit --no-inline
run jit
run syscall --context
run static-plt
run cxx --compat=perf --no-inline
