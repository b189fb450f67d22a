#!/usr/bin/env bash
# annotate.sh KFOLD SRCDIR: `kfold annotate` counts what perf annotate
# counts.  For each capture of testdata/annotate/ (stripped binary with a
# separate debug file, clang fp, gcc fp with -z) and the committed cases
# inline-dwarf (gcc DWARF), inline-clang (clang DWARF), syscall (fp, libc,
# kernel), zstd (-z) and dwarf-qsort (DWARF, libc), scripts/annotate-oracle.py
# runs `perf annotate --stdio -n --no-source` (perf 6.1, hermetic: empty
# build-id cache, the case's symfs) and `kfold annotate --format json
# --top 0` with the hermetic options of lib.sh, and compares the sample
# count of every instruction and every function's total, by ELF address.
# A difference fails, unless testdata/annotate/allow documents perf as
# wrong there and kfold's counts are still perf's address by address.
# Kernel functions are kfold's only (perf has no vmlinux).  The oracle's
# self-test runs first.
set -uo pipefail
kfold=$1
src=$2
. "$src/src/tests/lib.sh"
for tool in perf objdump python3 zstd; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kf_hermetic "$tmp" || exit 1
oracle=$src/scripts/annotate-oracle.py
fail=0

if python3 "$oracle" --selftest > "$tmp/selftest" 2>&1; then
	echo "ok   oracle self-test"
else
	cat "$tmp/selftest"
	echo "FAIL oracle self-test"
	fail=1
fi

n=0
for dir in "$src"/testdata/annotate/*/ "$src"/testdata/cases/{inline-dwarf,inline-clang,syscall,zstd,dwarf-qsort,ordering,twoevents,static-plt}/; do
	dir=${dir%/}
	[ -f "$dir/perf.data" ] || continue
	name=$(basename "$dir")
	kf_case "$dir"
	if python3 "$oracle" --name "$name" --symfs "$(kf_symfs "$dir")" \
		--kallsyms "$KF_KALLSYMS" --allow "$src/testdata/annotate/allow" \
		"$dir/perf.data" -- "$kfold" "${KF_CASE[@]}" > "$tmp/out" 2>&1; then
		echo "ok   $(tail -n 1 "$tmp/out")"
	else
		grep -v '^perf skipped\|^kfold-only' "$tmp/out"
		echo "FAIL $name"
		fail=1
	fi
	n=$((n + 1))
done
[ "$n" -ge 8 ] || { echo "FAIL only $n captures found"; fail=1; }

# the other event of twoevents: kfold --event page-faults against perf's
# page-faults sections
dir=$src/testdata/cases/twoevents
kf_case "$dir"
if python3 "$oracle" --name twoevents-page-faults --symfs "$(kf_symfs "$dir")" \
	--kallsyms "$KF_KALLSYMS" --allow "$src/testdata/annotate/allow" \
	"$dir/perf.data" -- "$kfold" "${KF_CASE[@]}" --event page-faults > "$tmp/out" 2>&1 &&
   grep -q '"event":"page-faults"' <("$kfold" annotate --format json -q "${KF_CASE[@]}" --event page-faults "$dir/perf.data"); then
	echo "ok   $(tail -n 1 "$tmp/out")"
else
	grep -v '^perf skipped\|^kfold-only' "$tmp/out"
	echo "FAIL twoevents --event page-faults"
	fail=1
fi

# the oracle sees a difference: kfold's JSON of inline-dwarf with one
# instruction's count changed by one must fail, naming the address
dir=$src/testdata/cases/inline-dwarf
kf_case "$dir"
"$kfold" annotate --format json --top 0 "${KF_CASE[@]}" "$dir/perf.data" > "$tmp/k.json" 2> "$tmp/k.err" &&
python3 - "$tmp/k.json" "$tmp/bad.json" > "$tmp/where" <<'PY' || fail=1
import json, sys
doc = json.load(open(sys.argv[1]))
ins = [i for f in doc["functions"] if f["symbol"] == "compute_stats"
       for i in f["instructions"] if i["samples"] > 0][0]
ins["samples"] += 1
json.dump(doc, open(sys.argv[2], "w"))
print(ins["addr"])
PY
python3 "$oracle" --symfs "$(kf_symfs "$dir")" --allow "$src/testdata/annotate/allow" \
	--kfold-json "$tmp/bad.json" "$dir/perf.data" > "$tmp/out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "^  $(cat "$tmp/where"): perf [0-9]*, kfold [0-9]*$" "$tmp/out"; then
	echo "ok   a changed count fails the oracle (exit $rc, at $(cat "$tmp/where"))"
else
	cat "$tmp/out"
	echo "FAIL a changed count at $(cat "$tmp/where") gave exit $rc"
	fail=1
fi
exit $fail
