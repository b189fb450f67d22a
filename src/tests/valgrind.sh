#!/usr/bin/env bash
# valgrind.sh KFOLD SRCDIR: memcheck finds no error and no lost block in
# kfold on any committed capture, in the default mode and, for the DWARF
# captures, in --compat=perf (its addr2line emulation) too.
#
# Valgrind 3.19 does not know openat2, so under it kfold opens files
# inside --symfs with its component-by-component fallback (src/fs.c):
# this test runs that path too.  Only for the plain build (meson does not
# register it under ASan, which memcheck cannot run).
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
command -v valgrind >/dev/null || { echo "FAIL: valgrind is missing (scripts/setup.sh installs it)"; exit 1; }
zstd -dqf "$src/testdata/kallsyms.zst" -o "$tmp/kallsyms"
mkdir -p "$tmp/none"
fail=0
n=0
run() {   # run NAME ARGS...
	local name=$1 rc
	shift
	valgrind -q --error-exitcode=99 --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
		--log-file="$tmp/vg.log" "$kfold" -q "$@" > /dev/null 2> "$tmp/err"
	rc=$?
	n=$((n + 1))
	if [ "$rc" -eq 99 ] || grep -q 'ERROR SUMMARY: [1-9]\|definitely lost\|Invalid \|uninitialised' "$tmp/vg.log"; then
		echo "FAIL valgrind $name:"
		grep -v 'unhandled amd64-linux syscall\|write your own handler\|README_MISSING\|consider this a bug\|valgrind.org/support' \
			"$tmp/vg.log" | head -40
		fail=1
	elif [ "$rc" -gt 1 ]; then
		echo "FAIL valgrind $name: kfold exited $rc"; cat "$tmp/err"; fail=1
	fi
}
for dir in "$src"/testdata/cases/*/; do
	name=$(basename "$dir")
	args=()
	[ -s "$dir/args" ] && read -r -a args < "$dir/args"
	if ls "$dir"/perf-*.map >/dev/null 2>&1; then
		args+=(--perf-map-dir "$dir")
	fi
	symfs=$src/testdata/symfs
	[ -d "$dir/symfs" ] && symfs=$dir/symfs
	common=(--symfs "$symfs" --kallsyms "$tmp/kallsyms" --buildid-dir "$tmp/none")
	run "$name" "${common[@]}" ${args[@]+"${args[@]}"} "$dir/perf.data"
	if grep -q 'call-graph dwarf' "$dir/README" 2>/dev/null; then
		run "$name --compat=perf" "${common[@]}" --compat=perf ${args[@]+"${args[@]}"} "$dir/perf.data"
	fi
	# kernel contexts: the JSON report and --context on captures with
	# kernel frames of many kinds
	case $name in
	system|ordering|dwarf-threads|syscall)
		run "$name --format json" "${common[@]}" --format json ${args[@]+"${args[@]}"} "$dir/perf.data"
		run "$name --context" "${common[@]}" --context --exclude idle ${args[@]+"${args[@]}"} "$dir/perf.data"
		;;
	esac
done
[ "$n" -ge 30 ] || { echo "FAIL valgrind: only $n runs"; exit 1; }
echo "valgrind: $n runs of kfold on the committed captures, memcheck clean: $([ $fail -eq 0 ] && echo yes || echo no)"
exit $fail
