#!/usr/bin/env bash
# bench-ab.sh: two kfold binaries on one capture, side by side in one run.
#
# usage: scripts/bench-ab.sh OLD NEW FILE [KALLSYMS]
#
# For each option set below it runs OLD and NEW alternately, $RUNS times
# each (default 5), after one untimed run of each (page cache, binaries),
# and prints the median wall time and peak RSS of each and NEW/OLD.  The
# order turns each round (OLD NEW, NEW OLD, ...): on a virtual machine
# whose free memory goes back to its host, the second of two runs started
# one after the other can be the faster (one build against itself in
# pairs: the second 11% faster in 8 of 8), which would favour whichever
# always ran second.
#
# Such a machine also drifts: the same build took 0.90 s in one batch and
# 1.20 s in another a few minutes later, more than most changes are worth.
# Each round's two runs share the machine's state of the moment, so the
# round's own NEW/OLD is printed too: the median of those ratios, their
# lowest and highest, and in how many rounds NEW was the faster.  A change
# is told from noise by that count (NEW faster in 17 rounds of 20 happens
# by chance about once in 800 when the two are the same), not by
# one median against the other.  SETS="default json" runs only those
# option sets (names as in the first column).  Both
# read FILE with --kallsyms KALLSYMS (default: `kallsyms` next to FILE, as
# scripts/bench.sh --keep leaves it) and an empty --buildid-dir, from an
# empty directory, with an empty HOME.  It checks that both print the same
# bytes (a difference is reported).  It measures time: it is not a test.
set -uo pipefail
[ $# -ge 3 ] || { echo "usage: $0 OLD NEW FILE [KALLSYMS]" >&2; exit 2; }
old=$(realpath "$1") new=$(realpath "$2") file=$(realpath "$3")
ks=${4:-$(dirname "$file")/kallsyms}
runs=${RUNS:-5}
[ -x /usr/bin/time ] || { echo "bench-ab.sh: needs GNU time (/usr/bin/time)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/home" "$tmp/nocache" "$tmp/run"
sets=(
	"default|"
	"no-inline|--no-inline"
	"compat|--compat=perf --no-inline"
	"json|--format json"
)
one() { # BIN OUT TIMEFILE ARGS...
	local bin=$1 out=$2 tf=$3
	shift 3
	(cd "$tmp/run" && HOME=$tmp/home /usr/bin/time -f '%e %M' -o "$tf" \
		"$bin" --kallsyms "$ks" --buildid-dir "$tmp/nocache" "$@" "$file" \
		> "$out" 2> /dev/null)
}
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
printf '%-10s %9s %9s %7s %9s %9s %7s  %s\n' set old_s new_s new/old old_MiB new_MiB new/old \
	'rounds: new/old median (lowest-highest), new faster'
for s in "${sets[@]}"; do
	name=${s%%|*}
	if [ -n "${SETS:-}" ] && [[ " $SETS " != *" $name "* ]]; then
		continue
	fi
	read -r -a args <<< "${s#*|}"
	one "$old" "$tmp/old.out" "$tmp/t" "${args[@]}"
	one "$new" "$tmp/new.out" "$tmp/t" "${args[@]}"
	cmp -s "$tmp/old.out" "$tmp/new.out" || echo "bench-ab.sh: $name: outputs differ" >&2
	: > "$tmp/old.t"; : > "$tmp/new.t"
	for ((i = 0; i < runs; i++)); do
		if ((i % 2 == 0)); then
			one "$old" /dev/null "$tmp/t" "${args[@]}"; cat "$tmp/t" >> "$tmp/old.t"
			one "$new" /dev/null "$tmp/t" "${args[@]}"; cat "$tmp/t" >> "$tmp/new.t"
		else
			one "$new" /dev/null "$tmp/t" "${args[@]}"; cat "$tmp/t" >> "$tmp/new.t"
			one "$old" /dev/null "$tmp/t" "${args[@]}"; cat "$tmp/t" >> "$tmp/old.t"
		fi
	done
	ow=$(cut -d' ' -f1 "$tmp/old.t" | median); nw=$(cut -d' ' -f1 "$tmp/new.t" | median)
	om=$(cut -d' ' -f2 "$tmp/old.t" | median); nm=$(cut -d' ' -f2 "$tmp/new.t" | median)
	# round i's ratio: line i of new.t over line i of old.t (the two
	# runs of one round, whichever went first)
	pairs=$(paste -d' ' "$tmp/old.t" "$tmp/new.t" |
		awk '{ printf "%.6f\n", ($1 > 0 ? $3 / $1 : 1) }' | sort -n |
		awk '{ v[NR] = $1; if ($1 < 1) f++ }
		     END { printf "%.3f (%.3f-%.3f), %d of %d", v[int((NR + 1) / 2)], v[1], v[NR], f, NR }')
	awk -v n="$name" -v ow="$ow" -v nw="$nw" -v om="$om" -v nm="$nm" -v pr="$pairs" 'BEGIN {
		printf "%-10s %9.3f %9.3f %7.3f %9.1f %9.1f %7.3f  %s\n", n, ow, nw, nw / ow,
			om / 1024, nm / 1024, nm / om, pr }'
done
