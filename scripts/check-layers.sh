#!/usr/bin/env bash
# check-layers.sh: every src/ file may include only headers of its own
# layer or a lower one (the data flows one way: bytes -> records -> state
# -> frames -> names -> output).  session.c and main.c sit on top.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../src"
declare -A layer=(
	[util]=0 [cur]=0 [error]=0 [kfold]=0 [fs]=0 [demangle]=0 [debuginfod]=0 [xz]=0 [host]=0
	[perfdata]=1 [order]=1 [sample]=1
	[maps]=2 [module]=2 [symtab]=2 [stacks]=2 [a2l]=2
	[tasks]=3 [dso]=3 [inline]=3
	[symbolize]=4 [classify]=4 [unwind]=4 [emit-folded]=5 [context]=5
	[session]=9 [report]=9 [main]=9
)
fail=0
for f in *.c *.h; do
	base=${f%.*}
	[ -n "${layer[$base]+x}" ] || { echo "check-layers: $f has no layer"; fail=1; continue; }
	while read -r inc; do
		h=${inc%.h}; h=${h%.def}
		[ -n "${layer[$h]+x}" ] || { echo "check-layers: $f includes unknown $inc"; fail=1; continue; }
		if [ "${layer[$h]}" -gt "${layer[$base]}" ]; then
			echo "check-layers: $f (layer ${layer[$base]}) includes $inc (layer ${layer[$h]})"
			fail=1
		fi
	done < <(grep -o '^#include "[a-z_.-]*"' "$f" | sed 's/#include "//;s/"$//')
done
# main.c sees only the public header
if grep -q '^#include "' main.c && grep '^#include "' main.c | grep -vq '"kfold.h"'; then
	echo "check-layers: main.c includes more than kfold.h"
	fail=1
fi
[ $fail -eq 0 ] && echo "check-layers: ok"
exit $fail
