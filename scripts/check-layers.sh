#!/usr/bin/env bash
# check-layers.sh: the folders of src/ are the stages of the pipeline
# (src/README.md), and a file may include only headers of its own folder or
# of a folder below it, so the data flows one way:
#     bytes -> records -> state -> names -> chains -> analysis -> output.
# One rule per folder: its rank.  include/kfold.h is rank 0 (error.h uses
# its codes).  cli/ sees only kfold.h.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../src"
declare -A rank=(
	[include]=0   # kfold.h: the public interface
	[util]=0      # memory, tables, bounded cursor, errors, files, the host
	[capture]=1   # perf.data bytes -> records -> sample views, time order
	[model]=2     # modules, mappings, tasks; the trie of raw frames
	[symbols]=3   # files by build-id, symbols, DWARF, naming of frames
	[callchain]=4 # a sample -> its raw frames (fp chains, DWARF unwinding)
	[analysis]=5  # kernel contexts, diagnostics
	[output]=6    # folded text, JSON, --explain, header
	[api]=8       # the session: wires the stages, implements kfold.h
	[cli]=9       # the kfold command
)
declare -A where=()
for f in ../include/*.h; do where[$(basename "$f")]=include; done
# made at build time from output/flame.js and flame.css (scripts/embed.py)
where[flame-assets.h]=output
for d in "${!rank[@]}"; do
	[ "$d" = include ] && continue
	[ -d "$d" ] || { echo "check-layers: no folder $d"; exit 1; }
	for f in "$d"/*.[ch] "$d"/*.def; do
		[ -e "$f" ] || continue
		where[$(basename "$f")]=$d
	done
done
fail=0
for d in */; do
	d=${d%/}
	case $d in tests|fuzz) continue ;; esac
	[ -n "${rank[$d]+x}" ] || { echo "check-layers: folder $d has no rank"; fail=1; continue; }
done
for f in */*.c */*.h; do
	d=${f%%/*}
	case $d in tests|fuzz) continue ;; esac
	[ -n "${rank[$d]+x}" ] || continue
	while read -r inc; do
		w=${where[$inc]:-}
		[ -n "$w" ] || { echo "check-layers: $f includes unknown $inc"; fail=1; continue; }
		if [ "${rank[$w]}" -gt "${rank[$d]}" ]; then
			echo "check-layers: $f ($d, rank ${rank[$d]}) includes $inc ($w, rank ${rank[$w]})"
			fail=1
		fi
		if [ "$d" = cli ] && [ "$w" != include ] && [ "$w" != cli ]; then
			echo "check-layers: $f includes $inc: cli/ sees only kfold.h"
			fail=1
		fi
	done < <(grep -o '^#include "[A-Za-z0-9_.-]*"' "$f" | sed 's/#include "//;s/"$//')
done
[ $fail -eq 0 ] && echo "check-layers: ok"
exit $fail
