#!/usr/bin/env bash
# outputs.sh: every output of one kfold binary on every committed capture,
# for checking that a change of structure changes no output.
#
# usage: scripts/outputs.sh KFOLD OUTDIR
#
# For each case in testdata/cases it runs KFOLD with the case's hermetic
# flags (src/tests/lib.sh) and each of the option variants below, and
# writes OUTDIR/CASE/VARIANT.out (stdout), .err (stderr) and .rc (exit
# status).  Compare two binaries with
#     scripts/outputs.sh old/kfold A && scripts/outputs.sh build/kfold B &&
#     diff -r A B
# JSON reports are written with their "kfold_version" left as it is: the
# two binaries of one comparison are the same version.
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: $0 KFOLD OUTDIR" >&2; exit 2; }
kfold=$(realpath "$1")
out=$2
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
. "$src/src/tests/lib.sh"
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
kf_hermetic "$tmp" || exit 2

variants=(
	"default|"
	"compat|--compat=perf"
	"compat-inline|--compat=perf --inline"
	"noinline|--no-inline"
	"srcline|--srcline"
	"samples|--samples"
	"pid|--pid"
	"tid|--tid --all"
	"kernel|--kernel --addrs"
	"jit|--jit"
	"context|--context"
	"verdict|--context=verdict"
	"exclude|--exclude=attributed,idle"
	"json|--format json"
	"json-noinline|--format json --no-inline --srcline"
	"explain|--explain"
	"header|--header"
	"stats|--stats"
	"stats-compat|--stats --compat=perf"
	"fileorder|--file-order"
)
# sed: the report's kfold_version and anything naming the temporary
# directory are the same for both binaries only after this
norm() { sed -e "s|$tmp|TMP|g" -e "s|$src|SRC|g" -e "s|work [0-9]* steps|work N steps|"; }

for dir in "$src"/testdata/cases/*/; do
	name=$(basename "$dir")
	[ -e "$dir/perf.data" ] || continue
	kf_case "$dir"
	mkdir -p "$out/$name"
	for v in "${variants[@]}"; do
		vn=${v%%|*}
		read -r -a extra <<< "${v#*|}"
		(cd "$tmp" && "$kfold" "${KF_CASE[@]}" "${extra[@]}" "$dir/perf.data" \
			> "$tmp/o" 2> "$tmp/e"; echo $? > "$tmp/rc")
		norm < "$tmp/o" > "$out/$name/$vn.out"
		norm < "$tmp/e" > "$out/$name/$vn.err"
		cp "$tmp/rc" "$out/$name/$vn.rc"
	done
done
