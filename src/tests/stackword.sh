#!/usr/bin/env bash
# stackword.sh KFOLD SRCDIR: small return addresses read from the user
# stack copy (docs/perf-compat.md U11, U13), with perf 6.1 as the oracle.
#
# perf 6.1 stores each unwound return address less 1 and prints every
# entry but those of 0 (unwind-libunwind-local.c, get_entries: `ips[j] ?
# entry(...) : 0`).  So a return address of 0 is a frame (0 - 1, printed
# [unknown]), one of 1 is no frame at all (1 - 1 = 0), and one of 2 is
# again a frame (1, in no mapping); the walk stops at each of them.
#
# For each capture below, scripts/patch-dynsize.py --word V writes a
# variant in which every sample with a stack copy is repeated once per
# word-aligned slot of its copy (up to MAX bytes), that slot set to V, for
# V = 0, 1 and 2: every slot the unwinder reads a return address from
# holds V in some sample.  Checks:
#  1. `perf script | collapse-perf.py` equals `kfold --compat=perf
#     --no-inline`, byte for byte, for each V;
#  2. the cases are the ones meant: perf's stacks with V = 0 and 2 hold
#     [unknown] frames the stacks with V = 1 do not, and the stacks with
#     V = 1 differ from the unpatched capture's (a return address was
#     replaced and the walk stopped there).
# dwarf-small follows CFI; dwarf-nocfi has no CFI, so its walk is
# libunwind's frame-pointer fallback (a return address from [rbp + 8]).
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

# unknown FOLDED: the weight of the stacks holding an [unknown] frame
unknown() {
	awk '/\[unknown\]/ { s += $NF } END { printf "%.0f\n", s }' "$1"
}

# check_case NAME MAX: the checks above on testdata/cases/NAME
check_case() {
	local name=$1 max=$2 dir=$src/testdata/cases/$1 v rc symfs
	local t=$tmp/$name
	kf_case "$dir"
	symfs=$(kf_symfs "$dir")
	kf_perf_script "$tmp" "$dir/perf.data" "$symfs" > "$t.orig.script" 2> /dev/null
	python3 "$src/scripts/collapse-perf.py" "$t.orig.script" > "$t.orig.perf"
	for v in 0 1 2; do
		if ! python3 "$src/scripts/patch-dynsize.py" --word "$v" --min 0 \
			--drop-tail 8 --max "$max" "$dir/perf.data" "$t.$v.data" \
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
		if [ $rc -ne 0 ]; then
			echo "FAIL $name $v: kfold exited $rc: $(head -3 "$t.$v.kerr")"
			fail=1
			return
		fi
		if cmp -s "$t.$v.perf" "$t.$v.compat"; then
			echo "ok $name word $v ($(cat "$t.$v.patch")): --compat=perf equals" \
				"perf ($(wc -l < "$t.$v.perf") stacks)"
		else
			echo "FAIL $name word $v: --compat=perf differs from perf:"
			diff "$t.$v.perf" "$t.$v.compat" | head -20
			fail=1
		fi
	done
	local u0 u1 u2
	u0=$(unknown "$t.0.perf")
	u1=$(unknown "$t.1.perf")
	u2=$(unknown "$t.2.perf")
	if [ "$u0" -gt "$u1" ] && [ "$u2" -gt "$u1" ]; then
		echo "ok $name: perf's stacks hold [unknown] frames of weight $u0 (word 0)," \
			"$u1 (word 1), $u2 (word 2)"
	else
		echo "FAIL $name: [unknown] weight $u0 (word 0), $u1 (word 1), $u2 (word 2):" \
			"the words are not where return addresses are read"
		fail=1
	fi
	# the patched file repeats each sample once per slot: compare the
	# stacks, not their weights
	if cmp -s <(awk '{ $NF = ""; print }' "$t.orig.perf" | sort -u) \
		<(awk '{ $NF = ""; print }' "$t.1.perf" | sort -u); then
		echo "FAIL $name: the stacks with word 1 are the unpatched capture's"
		fail=1
	fi
}

check_case dwarf-small 512
check_case dwarf-nocfi 512
exit $fail
