#!/usr/bin/env bash
# valgrind.sh KFOLD SRCDIR: memcheck finds no error and no lost block in
# kfold on any committed capture, in the default mode and, for the DWARF
# captures, in --compat=perf (its addr2line emulation) too.
#
# Valgrind 3.19 does not know openat2, so under it kfold opens files
# inside --symfs with its component-by-component fallback (src/util/fs.c):
# this test runs that path too.  Only for the plain build (meson does not
# register it under ASan, which memcheck cannot run).
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
command -v valgrind >/dev/null || { echo "FAIL: valgrind is missing (scripts/setup.sh installs it)"; exit 1; }
# memcheck needs the C library's debug file (libc6-dbg); where
# scripts/hermetic.sh hid /usr/lib/debug it says where a copy is
vg=(valgrind -q --error-exitcode=99)
[ -n "${KFOLD_VALGRIND_DEBUGINFO:-}" ] && vg+=(--extra-debuginfo-path="$KFOLD_VALGRIND_DEBUGINFO")
# a valgrind that cannot start exits 1, like kfold on a damaged capture:
# make sure it runs at all, or every run below would "pass"
if ! "${vg[@]}" --log-file="$tmp/vg.log" /bin/true; then
	echo "FAIL: valgrind does not run here:"
	head -20 "$tmp/vg.log"
	exit 1
fi
fail=0
n=0
run() {   # run NAME ARGS...
	local name=$1 rc
	shift
	"${vg[@]}" --leak-check=full \
		--errors-for-leak-kinds=definite,indirect --show-leak-kinds=definite,indirect \
		--log-file="$tmp/vg.log" "$kfold" -q "$@" > /dev/null 2> "$tmp/err"
	rc=$?
	n=$((n + 1))
	if [ "$rc" -eq 99 ] || grep -q 'ERROR SUMMARY: [1-9]\|definitely lost\|Invalid \|uninitialised' "$tmp/vg.log"; then
		echo "FAIL valgrind $name:"
		grep -v 'unhandled amd64-linux syscall\|write your own handler\|README_MISSING\|consider this a bug\|valgrind.org/support' \
			"$tmp/vg.log" | head -40
		fail=1
	elif [ "$rc" -ne 0 ]; then   # every committed capture is read whole
		echo "FAIL valgrind $name: kfold exited $rc"; cat "$tmp/err"; fail=1
	fi
}
for dir in "$src"/testdata/cases/*/; do
	name=$(basename "$dir")
	kf_case "$dir"
	common=("${KF_CASE[@]}")
	run "$name" "${common[@]}" "$dir/perf.data"
	if grep -q 'call-graph dwarf' "$dir/README" 2>/dev/null; then
		run "$name --compat=perf" "${common[@]}" --compat=perf "$dir/perf.data"
	fi
	# kernel contexts: the JSON report and --context on captures with
	# kernel frames of many kinds
	case $name in
	system|ordering|dwarf-threads|syscall)
		run "$name --format json" "${common[@]}" --format json "$dir/perf.data"
		run "$name --context" "${common[@]}" --context --exclude idle "$dir/perf.data"
		;;
	esac
done
[ "$n" -ge 30 ] || { echo "FAIL valgrind: only $n runs"; exit 1; }
echo "valgrind: $n runs of kfold on the committed captures, memcheck clean: $([ $fail -eq 0 ] && echo yes || echo no)"
exit $fail
