#!/usr/bin/env bash
# lastword.sh KFOLD SRCDIR: the last word of the user stack copy (README,
# correction 10), with perf 6.1 as the oracle.
#
# perf 6.1's libunwind callback (tools/perf/util/unwind-libunwind-local.c,
# access_mem) reads a word of the copy only when addr + 8 < sp + dyn_size:
# the copy's last 8 bytes are refused, and a return address there reads as
# 0, so the stack ends one frame earlier, in perf's 0 - 1 [unknown] frame.
# kfold's default mode reads that word; --compat=perf does as perf.
#
# For each capture below, scripts/patch-dynsize.py writes two variants in
# which every sample with a stack copy is repeated once per cut C = 0, 8,
# 16, ... (up to the copy's end or MAX bytes), only its dyn_size lowered:
#   A: dyn_size = C      (the copy's last word is the one below C)
#   B: dyn_size = C + 1  (one byte more: perf reads the word below C)
# Every word-aligned place of the stack (up to MAX), so every slot that
# holds a return address, is the copy's last word in some sample of A.
# Checks:
#  1. `perf script | collapse-perf.py` equals `kfold --compat=perf
#     --no-inline`, byte for byte, on A and on B;
#  2. the bound is exercised: perf's stacks of A have fewer frames in all
#     than those of B (the words perf refuses in A are return addresses);
#  3. the default mode reads the last word: kfold's stacks of A equal
#     perf's stacks of B with the capture's documented corrections
#     (scripts/derive-default.py; [truncated] where the copy ran out),
#     and have more frames than perf's stacks of A so corrected;
#     for a capture whose default mode has no perf oracle (dwarf-nocfi:
#     perf unwinds it wrongly, CASE/corrections) only that kfold's
#     default stacks of A and B are equal (the byte more changes nothing
#     for a reader of whole words), and that each of them reaches _start
#     or ends in [truncated] (the frame-pointer step that needs words past
#     the copy says so).
# dwarf-small follows CFI; dwarf-nocfi has no CFI, so the walk is
# libunwind's frame-pointer fallback (kfold's fp_step).
set -uo pipefail
kfold=$1
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for tool in perf python3 zstd; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || { echo "FAIL: cannot unpack the kallsyms snapshot"; exit 1; }
mkdir -p "$tmp/home"
fail=0

# frames FOLDED: the frames of all its stacks, each weighted by its count
# (the sum of the sample periods; the comm is no frame)
frames() {
	awk '{ n = split($0, f, ";"); s += (n - 1) * $NF } END { printf "%.0f\n", s }' "$1"
}

# check_case NAME MAX: the checks above on testdata/cases/NAME, cuts up to MAX
# bytes (0: the whole copy)
check_case() {
	local name=$1 max=$2 dir=$src/testdata/cases/$1 v rc symfs oracle=1
	local t=$tmp/$name maxopt=()
	[ "$max" -gt 0 ] && maxopt=(--max "$max")
	kf_case "$dir"
	symfs=$(kf_symfs "$dir")
	grep -q '^no-oracle' "$dir/corrections" 2>/dev/null && oracle=0
	for v in A B; do
		local add=0
		[ $v = B ] && add=1
		if ! python3 "$src/scripts/patch-dynsize.py" --min 0 --add $add \
			${maxopt[@]+"${maxopt[@]}"} "$dir/perf.data" "$t.$v.data" \
			2> "$t.$v.patch"; then
			echo "FAIL $name $v: patch-dynsize.py: $(cat "$t.$v.patch")"
			fail=1
			return
		fi
		rc=0
		kf_perf_script "$tmp" "$t.$v.data" "$symfs" > "$t.$v.script" 2> "$t.$v.perr" || rc=$?
		if [ $rc -ne 0 ] || [ ! -s "$t.$v.script" ]; then
			echo "FAIL $name $v: perf script exited $rc: $(head -3 "$t.$v.perr")"
			fail=1
			return
		fi
		python3 "$src/scripts/collapse-perf.py" "$t.$v.script" > "$t.$v.perf"
		rc=0
		"$kfold" "${KF_CASE[@]}" --compat=perf --no-inline "$t.$v.data" \
			> "$t.$v.compat" 2> "$t.$v.kerr" || rc=$?
		"$kfold" "${KF_CASE[@]}" --no-inline "$t.$v.data" \
			> "$t.$v.default" 2>> "$t.$v.kerr" || rc=$?
		if [ $rc -ne 0 ]; then
			echo "FAIL $name $v: kfold exited $rc: $(head -3 "$t.$v.kerr")"
			fail=1
			return
		fi
		# 1. --compat=perf is perf
		if cmp -s "$t.$v.perf" "$t.$v.compat"; then
			echo "ok $name $v ($(cat "$t.$v.patch")): --compat=perf equals perf" \
				"($(wc -l < "$t.$v.perf") stacks)"
		else
			echo "FAIL $name $v: --compat=perf differs from perf:"
			diff "$t.$v.perf" "$t.$v.compat" | head -20
			fail=1
		fi
	done
	# 2. perf refuses the last word
	local fa fb
	fa=$(frames "$t.A.perf")
	fb=$(frames "$t.B.perf")
	if [ "$fa" -lt "$fb" ]; then
		echo "ok $name: perf's stacks have $fa frames (weighted by period) with dyn_size C, $fb with C + 1"
	else
		echo "FAIL $name: perf's stacks have $fa frames (weighted by period) with dyn_size C, $fb with C + 1:" \
			"the variants do not reach the bound"
		fail=1
	fi
	# 3. the default mode reads it
	if [ $oracle = 0 ]; then
		if cmp -s "$t.A.default" "$t.B.default"; then
			echo "ok $name: default mode (no perf oracle: $dir/corrections) the same with C and C + 1"
		else
			echo "FAIL $name: default mode differs between dyn_size C and C + 1:"
			diff "$t.A.default" "$t.B.default" | head -20
			fail=1
		fi
		if awk -F';' '$2 != "_start" && $2 != "[truncated]" { bad = 1 }
			END { exit bad }' "$t.A.default"; then
			echo "ok $name: default mode: every stack with dyn_size C reaches _start or says [truncated]"
		else
			echo "FAIL $name: default mode: stacks with dyn_size C that end neither at _start nor in [truncated]:"
			awk -F';' '$2 != "_start" && $2 != "[truncated]"' "$t.A.default" | head -10
			fail=1
		fi
		return
	fi
	for v in A B; do
		mkdir -p "$t.$v.case"
		python3 "$src/scripts/collapse-perf.py" --addrs "$t.$v.script" \
			> "$t.$v.case/expected.addrs.folded"
		cp "$t.$v.perf" "$t.$v.case/expected.folded"
		[ -f "$dir/corrections" ] && cp "$dir/corrections" "$t.$v.case/"
		python3 "$src/scripts/derive-default.py" "$t.$v.case" > "$t.$v.want"
	done
	local fd fw
	fd=$(frames "$t.A.default")
	fw=$(frames "$t.A.want")
	if cmp -s "$t.A.default" "$t.B.want"; then
		echo "ok $name: default mode with dyn_size C equals perf with C + 1 (+ corrections)"
	else
		echo "FAIL $name: default mode with dyn_size C differs from perf with C + 1 (+ corrections):"
		diff "$t.B.want" "$t.A.default" | head -20
		fail=1
	fi
	if [ "$fd" -gt "$fw" ]; then
		echo "ok $name: default mode keeps $((fd - fw)) frames (weighted by period) more than perf (+ corrections) with dyn_size C"
	else
		echo "FAIL $name: default mode has $fd frames with dyn_size C, perf (+ corrections) $fw"
		fail=1
	fi
}

check_case dwarf-small 0
check_case dwarf-nocfi 512
exit $fail
