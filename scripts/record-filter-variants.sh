#!/usr/bin/env bash
# record-filter-variants.sh: the perf oracles of the filter options
# (--pids, --tids, --comms, --cpus, --time) on committed captures.
#
# Appends filter variants to the `variants` files of the system, threads
# and forkexec cases (golden.sh compares both of kfold's modes with them)
# and writes their CASE/expected.NAME.folded with scripts/oracle.sh, which
# runs `perf script` with perf's spelling of each filter (--pid, --tid,
# --comms, --cpu, --time).  Two oracles whose arguments hold spaces, which
# a variants line cannot carry, go to files of their own for
# src/tests/filters.sh:
#   system/expected.filter-ranges.folded   --time '1266.45,1266.5 1266.55,1266.6'
#   threads/expected.filter-space.folded   --comms 'beta worker,gamma_sys'
# Run from the repository's top directory on a machine with perf 6.1.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cases=testdata/cases

add() {   # CASE NAME KFOLD-ARGS PERF-ARGS
	local c=$1 name=$2 kargs=$3 pargs=$4 f=$cases/$1/variants
	touch "$f"
	grep -q "^$name|" "$f" || printf '%s|%s|%s||\n' "$name" "$kargs" "$pargs" >> "$f"
	# shellcheck disable=SC2086
	scripts/oracle.sh "$cases/$c" $pargs > "$cases/$c/expected.$name.folded"
}

add system filter-comms "--comms syscall" "--comms syscall"
add system filter-cpus "--cpus 1" "--cpu 1"
add system filter-time "--time 1266.5," "--time 1266.5,"
add system filter-slice "--time 10%/2" "--time 10%/2"
add system filter-pcts "--time 0%-20%,50%-60%" "--time 0%-20%,50%-60%"
add system filter-pct "--time 25%" "--time 25%"
add threads filter-tids "--tids 8350,8351" "--tid 8350,8351"
add threads filter-pids "--pids 8348" "--pid 8348"
add forkexec filter-comms "--comms forkexec" "--comms forkexec"
add forkexec filter-pids "--pids 8358" "--pid 8358"

scripts/oracle.sh $cases/system --time '1266.45,1266.5 1266.55,1266.6' \
	> $cases/system/expected.filter-ranges.folded
scripts/oracle.sh $cases/threads --comms 'beta worker,gamma_sys' \
	> $cases/threads/expected.filter-space.folded
wc -l $cases/*/expected.filter-*.folded
