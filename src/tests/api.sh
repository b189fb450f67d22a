#!/usr/bin/env bash
# api.sh: a program on include/kfold.h alone (test-api) rebuilds the
# folded output of committed captures from the library's structured
# stacks and frames, and it equals what the kfold command prints with the
# same options.  Hermetic: the flags of src/tests/lib.sh; test-api hands
# the library no host.  test-api also checks that the frames a stack says
# it shares with the one before (n_shared) are that stack's; here, that
# stacks do share frames.
#
# usage: api.sh KFOLD SRCDIR TEST-API
set -uo pipefail
kfold=$1 src=$2 api=$3
. "$src/src/tests/lib.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kf_hermetic "$tmp" || exit 1
fail=0 runs=0 shared=0
# frame pointers, DWARF unwinding, inline chains, the kernel, a perf map,
# a byte-swapped capture, a pipe, C++ and Rust names, a static .plt
cases=(syscall dwarf-qsort inline-dwarf inline-dwz jit bigendian pipe cxx
       rust-v0 static-plt threads)
variants=("" "--no-inline" "--tid --srcline" "--kernel --pid" "--compat")
for c in "${cases[@]}"; do
	dir=$src/testdata/cases/$c
	kf_case "$dir"
	for v in "${variants[@]}"; do
		read -r -a extra <<< "$v"
		cli=()
		for w in "${extra[@]}"; do
			[ "$w" = --compat ] && w=--compat=perf
			cli+=("$w")
		done
		"$kfold" "${KF_CASE[@]}" "${cli[@]}" "$dir/perf.data" \
			> "$tmp/folded" 2> /dev/null
		runs=$((runs + 1))
		if ! "$api" "${KF_CASE[@]}" "${extra[@]}" "$dir/perf.data" \
			"$tmp/folded" > "$tmp/out" 2>&1; then
			echo "FAIL: $c $v"
			head -20 "$tmp/out"
			fail=1
		fi
		n=$(sed -n 's/.* \([0-9]*\) frames shared with the stack before$/\1/p' "$tmp/out")
		shared=$((shared + ${n:-0}))
	done
done
[ "$shared" -gt 1000 ] || { echo "FAIL: only $shared frames shared between stacks"; fail=1; }
echo "api: $runs runs, $shared frames shared with the stack before, $([ $fail = 0 ] && echo ok || echo FAILED)"
exit $fail
