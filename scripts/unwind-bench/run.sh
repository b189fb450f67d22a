#!/usr/bin/env bash
# run.sh - build dwfl-unwind, check it against kfold on the DWARF test
# captures and on a large capture, and time both (median of N runs).
#
# usage: scripts/unwind-bench/run.sh [BIG_CAPTURE_DIR]
#   BIG_CAPTURE_DIR holds perf.data and kallsyms (default
#   /tmp/kfold-bench.YasLZ9, made by scripts/bench.sh); its binaries are
#   read at their recorded paths on this machine.
# env: KFOLD (default build/kfold), RUNS (3), WORK (a temp dir),
#      SYMBOLIZE=1 also times -S (slow: tens of seconds per run),
#      SETTLE=seconds to wait before the timing (load average decay)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
big=${1:-/tmp/kfold-bench.YasLZ9}
kfold=${KFOLD:-$top/build/kfold}
runs=${RUNS:-3}
work=${WORK:-$(mktemp -d /tmp/unwind-bench.XXXXXX)}
symfs=$top/testdata/symfs
nobid=$work/empty-buildid
mkdir -p "$nobid"
unset DEBUGINFOD_URLS

median() { sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }

echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(uname -r), $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# libdw $(pkg-config --modversion libdw), kfold $("$kfold" --version 2>&1 | head -1), git $(git -C "$top" rev-parse --short HEAD)"
cc -O2 -std=c11 -Wall -Wextra -o "$work/dwfl-unwind" "$here/dwfl-unwind.c" \
	$(pkg-config --cflags --libs libdw)
du=$work/dwfl-unwind

echo
echo "## correctness: DWARF test captures (symfs $symfs)"
for c in dwarf-qsort dwarf-threads dwarf-dbgframe; do
	pd=$top/testdata/cases/$c/perf.data
	python3 "$here/extract.py" "$pd" "$work/$c.bin" 2>/dev/null
	"$kfold" --symfs "$symfs" --buildid-dir "$nobid" --samples --kernel --pid -q "$pd" > "$work/$c.kfold"
	"$du" -f -s "$symfs" "$work/$c.bin" > "$work/$c.dwfl" 2> "$work/$c.err"
	echo "### $c"
	sed 's/^/    /' "$work/$c.err"
	python3 "$here/compare.py" "$work/$c.kfold" "$work/$c.dwfl" 4 | sed 's/^/    /'
done

echo
echo "## large capture: $big/perf.data ($(stat -c %s "$big/perf.data") bytes)"
python3 "$here/extract.py" "$big/perf.data" "$work/big.bin"
"$kfold" --kallsyms "$big/kallsyms" --buildid-dir "$nobid" --stats "$big/perf.data" \
	2>&1 >/dev/null | grep -E '^kfold: (records|user stacks)' | sed 's/^/    /'
"$kfold" --kallsyms "$big/kallsyms" --buildid-dir "$nobid" --samples --kernel --pid -q \
	"$big/perf.data" > "$work/big.kfold"
"$du" -f "$work/big.bin" > "$work/big.dwfl" 2> "$work/big.err"
sed 's/^/    /' "$work/big.err"
python3 "$here/compare.py" "$work/big.kfold" "$work/big.dwfl" 12 | sed 's/^/    /'

sleep "${SETTLE:-0}"   # let the load of the checks above decay
echo
echo "## timing, median of $runs (load before: $(cut -d' ' -f1-3 /proc/loadavg))"
# warm the page cache
"$kfold" --kallsyms "$big/kallsyms" --buildid-dir "$nobid" "$big/perf.data" > /dev/null
"$du" -D "$work/big.bin" 2> /dev/null
modes=("-m process" "-m process -C" "-m process -D" "-m shared" "-m shared -C"
       "-m shared -D" "-m sample" "-m sample -C")
[ "${SYMBOLIZE:-0}" = 1 ] && modes+=("-m process -S")
# rounds: kfold, then every mode, RUNS times (drift hits all alike)
for i in $(seq "$runs"); do
	/usr/bin/time -f '%e %U %S %M' -o "$work/kfold.time.$i" \
		"$kfold" --kallsyms "$big/kallsyms" --buildid-dir "$nobid" "$big/perf.data" > /dev/null
	for k in "${!modes[@]}"; do
		# shellcheck disable=SC2086
		"$du" ${modes[$k]} "$work/big.bin" 2> "$work/du.err.$k.$i" > /dev/null
	done
done
w=$(for i in $(seq "$runs"); do cut -d' ' -f1 "$work/kfold.time.$i"; done | median)
c=$(for i in $(seq "$runs"); do awk '{print $2 + $3}' "$work/kfold.time.$i"; done | median)
r=$(for i in $(seq "$runs"); do awk '{print $4 / 1024}' "$work/kfold.time.$i"; done | median)
printf '%-34s wall %6.3f s  cpu %6.3f s  RSS %5.0f MiB  (whole run: parse, order, unwind, symbolize, fold, write)\n' \
	"kfold" "$w" "$c" "$r"
echo "kfold walls: $(for i in $(seq "$runs"); do cut -d' ' -f1 "$work/kfold.time.$i"; done | tr '\n' ' ')"
for k in "${!modes[@]}"; do
	m=${modes[$k]}
	t=$(for i in $(seq "$runs"); do sed -n 's/.*unwind phase \([0-9.]*\) s.*/\1/p' "$work/du.err.$k.$i"; done | median)
	all=$(for i in $(seq "$runs"); do sed -n 's/.*unwind phase \([0-9.]*\) s.*/\1/p' "$work/du.err.$k.$i"; done | tr '\n' ' ')
	cpu=$(for i in $(seq "$runs"); do sed -n 's/.*(cpu \([0-9.]*\) s;.*/\1/p' "$work/du.err.$k.$i"; done | median)
	fr=$(sed -n 's/.*total frames \([0-9]*\),.*/\1/p' "$work/du.err.$k.1")
	ns=$(sed -n 's/.*samples \([0-9]*\), total.*/\1/p' "$work/du.err.$k.1")
	printf '%-34s unwind %6.3f s  cpu %6.3f s  %8.0f samples/s  %9.0f frames/s  (walls: %s)\n' \
		"dwfl-unwind $m" "$t" "$cpu" "$(echo "$ns / $t" | bc -l)" "$(echo "$fr / $t" | bc -l)" "$all"
done
echo "kfold samples/s (whole run): $(echo "$(sed -n 's/.*samples \([0-9]*\), total.*/\1/p' "$work/du.err.0.1") / $w" | bc -l | cut -d. -f1) (unwound samples / median wall)"
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg); outputs in $work"
