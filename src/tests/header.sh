#!/usr/bin/env bash
# header.sh KFOLD SRCDIR: kfold --header against perf report --header-only
# on every committed capture: every line kfold prints (but its own event
# summary) must appear in perf's header as it is.
set -uo pipefail
kfold=$1
src=$2
command -v perf >/dev/null || { echo "SKIP: perf is not installed"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home"
: > "$tmp/perfconfig"
fail=0
n=0
for dir in "$src"/testdata/cases/*/; do
	name=$(basename "$dir")
	[ "$name" = killed ] && continue   # perf refuses a data.size 0 header
	[ "$name" = bigendian ] && continue   # perf 6.1 misreads some BE fields
	HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C perf report \
		--header-only -i "$dir/perf.data" > "$tmp/perf.txt" 2>/dev/null
	"$kfold" --header "$dir/perf.data" > "$tmp/kfold.txt" 2>/dev/null ||
		{ echo "FAIL $name: kfold --header failed"; fail=1; continue; }
	[ -s "$tmp/kfold.txt" ] || { echo "FAIL $name: empty header"; fail=1; continue; }
	while IFS= read -r line; do
		case $line in "# event :"*) continue ;; esac
		if ! grep -qxF -- "$line" "$tmp/perf.txt"; then
			echo "FAIL $name: perf's header lacks: $line"
			grep -F -- "${line%% : *}" "$tmp/perf.txt" | sed 's/^/    perf: /'
			fail=1
		fi
	done < "$tmp/kfold.txt"
	n=$((n + 1))
done
echo "$n headers compared"
exit $fail
