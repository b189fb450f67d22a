#!/bin/bash
# dlopen.sh KFOLD SRC: capstone and libdebuginfod are loaded at run time,
# so a host without them runs every command but the one that needs them
# (README "What kfold needs at run time").
#
#   1. readelf -d KFOLD: no NEEDED libcapstone or libdebuginfod, and
#      nothing outside the run-time set the README lists (plus the
#      toolchain's own libraries, for sanitizer builds);
#   2. libcapstone.so.4 hidden (a bind mount of /dev/null over it in an
#      unshare -m namespace, root only; or not installed at all):
#      `kfold annotate` exits 2 with the message naming the package, and
#      folding the same capture gives the same bytes as with it;
#   3. libdebuginfod.so.1 hidden, DEBUGINFOD_URLS set to a port nothing
#      listens on: one warning, no lookup (no "no answer" warning), and the
#      folded output is the run's without DEBUGINFOD_URLS; with the library
#      present the same run does ask (the lookup fails: connection
#      refused), so the dlopen'd library is the one that works.
set -uo pipefail
kfold=$(realpath "$1")
src=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
kf_case "$src/testdata/cases/syscall"
cap=$src/testdata/cases/syscall/perf.data
fail=0
export DEBUGINFOD_CACHE_PATH=$tmp/dinfod-cache DEBUGINFOD_TIMEOUT=5
unset DEBUGINFOD_URLS

# ---- 1. the NEEDED list
command -v readelf >/dev/null || { echo "FAIL: readelf (binutils) is missing"; exit 1; }
needed=$(readelf -d "$kfold" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
echo "NEEDED: $(echo "$needed" | tr '\n' ' ')"
[ -n "$needed" ] || { echo "FAIL: readelf -d lists no NEEDED entry"; fail=1; }
for lib in $needed; do
	case $lib in
	libcapstone*|libdebuginfod*|libcurl*)
		echo "FAIL: $lib is NEEDED (it must be loaded with dlopen)"; fail=1 ;;
	# the README's list (libc6's loader: __tls_get_addr of the
	# thread-local work counters)
	libc.so.6|ld-linux-x86-64.so.2|ld-linux-aarch64.so.1|ld-linux.so.2) ;;
	libelf.so.1|libdw.so.1|libzstd.so.1|libz.so.1|libbz2.so.1.0|liblzma.so.5|libjansson.so.4) ;;
	# a sanitizer or older-glibc build's toolchain libraries
	libm.so.6|libdl.so.2|libpthread.so.0|librt.so.1|libgcc_s.so.1|libasan.so.*|libubsan.so.*) ;;
	*) echo "FAIL: $lib is NEEDED, not in the README's run-time list"; fail=1 ;;
	esac
done
[ "$fail" = 0 ] && echo "ok   NEEDED has no libcapstone, libdebuginfod or anything off the list"

# the soname's files as the loader finds them (ldconfig's cache), real paths
lib_files() {
	ldconfig -p 2>/dev/null | sed -n "s/^[[:space:]]*$1 (.*=> //p" |
		while read -r f; do realpath "$f"; done | sort -u
}
# runs "$@" in a mount namespace where every file of $files is empty
hidden() {
	unshare -m sh -c 'for f in $files; do
		mount --bind /dev/null "$f" || exit 97; done; exec "$@"' sh "$@"
}
can_hide=false
if [ "$(id -u)" -eq 0 ] && unshare -m true 2>/dev/null; then
	can_hide=true
fi

"$kfold" "${KF_CASE[@]}" "$cap" > "$tmp/fold.ref" 2> "$tmp/fold.ref.err"
rc=$?
[ "$rc" = 0 ] && [ -s "$tmp/fold.ref" ] || { echo "FAIL: kfold on syscall exited $rc"; fail=1; }

# ---- 2. capstone
files=$(lib_files libcapstone.so.4)
export files
"$kfold" annotate "${KF_CASE[@]}" "$cap" > "$tmp/ann.out" 2> "$tmp/ann.err"
rc=$?
if [ -n "$files" ]; then
	if [ "$rc" = 0 ] && grep -q '^# kfold annotate: 201 samples of cpu-clock' "$tmp/ann.out" &&
	   grep -q '^do_syscall_64  \[\[kernel.kallsyms\]\]' "$tmp/ann.out"; then
		echo "ok   with libcapstone.so.4: kfold annotate disassembles"
	else
		echo "FAIL: with libcapstone.so.4, kfold annotate exited $rc:"; head -5 "$tmp/ann.err" "$tmp/ann.out"; fail=1
	fi
fi
if [ -z "$files" ] || $can_hide; then
	if [ -n "$files" ]; then
		hidden "$kfold" annotate "${KF_CASE[@]}" "$cap" > "$tmp/ann.out" 2> "$tmp/ann.err"
		rc=$?
		hidden "$kfold" "${KF_CASE[@]}" "$cap" > "$tmp/fold.out" 2> "$tmp/fold.err"
		frc=$?
	else
		"$kfold" "${KF_CASE[@]}" "$cap" > "$tmp/fold.out" 2> "$tmp/fold.err"
		frc=$?
	fi
	want="kfold: kfold annotate needs libcapstone (Debian: libcapstone4): cannot load libcapstone.so.4: "
	if [ "$rc" = 2 ] && [ "$(wc -l < "$tmp/ann.err")" = 1 ] &&
	   [ "$(head -c ${#want} "$tmp/ann.err")" = "$want" ] && [ ! -s "$tmp/ann.out" ]; then
		echo "ok   without libcapstone.so.4: kfold annotate exits 2: $(cat "$tmp/ann.err")"
	else
		echo "FAIL: without libcapstone.so.4, kfold annotate exited $rc, said:"; cat "$tmp/ann.err"; fail=1
	fi
	if [ "$frc" = 0 ] && cmp -s "$tmp/fold.out" "$tmp/fold.ref" && cmp -s "$tmp/fold.err" "$tmp/fold.ref.err"; then
		echo "ok   without libcapstone.so.4: kfold folds the same bytes"
	else
		echo "FAIL: without libcapstone.so.4, kfold exited $frc or folded otherwise"; head -3 "$tmp/fold.err"; fail=1
	fi
else
	echo "ok   (not root or no unshare -m: capstone not hidden)"
fi

# ---- 3. libdebuginfod
files=$(lib_files libdebuginfod.so.1)
export files
nolib="kfold: warning: DEBUGINFOD_URLS is set but libdebuginfod.so.1 cannot be loaded (Debian: libdebuginfod1): no debuginfod lookups"
if [ -n "$files" ]; then
	DEBUGINFOD_URLS=http://127.0.0.1:1 "$kfold" "${KF_CASE[@]}" "$cap" > "$tmp/d.out" 2> "$tmp/d.err"
	rc=$?
	if [ "$rc" = 0 ] && grep -q '^kfold: warning: debuginfod: no answer for build-id .*Connection refused' "$tmp/d.err" &&
	   ! grep -qF "$nolib" "$tmp/d.err"; then
		echo "ok   with libdebuginfod.so.1: DEBUGINFOD_URLS makes lookups (connection refused)"
	else
		echo "FAIL: with libdebuginfod.so.1 and DEBUGINFOD_URLS, kfold exited $rc, said:"; cat "$tmp/d.err"; fail=1
	fi
fi
if [ -z "$files" ] || $can_hide; then
	if [ -n "$files" ]; then
		DEBUGINFOD_URLS=http://127.0.0.1:1 hidden "$kfold" "${KF_CASE[@]}" "$cap" > "$tmp/d.out" 2> "$tmp/d.err"
	else
		DEBUGINFOD_URLS=http://127.0.0.1:1 "$kfold" "${KF_CASE[@]}" "$cap" > "$tmp/d.out" 2> "$tmp/d.err"
	fi
	rc=$?
	# the warning, once, and otherwise what the run without servers said
	if [ "$rc" = 0 ] && [ "$(grep -cxF "$nolib" "$tmp/d.err")" = 1 ] &&
	   { grep -vxF "$nolib" "$tmp/d.err" || true; } | cmp -s - "$tmp/fold.ref.err" &&
	   cmp -s "$tmp/d.out" "$tmp/fold.ref"; then
		echo "ok   without libdebuginfod.so.1: one warning, no lookup, the same folded bytes"
	else
		echo "FAIL: without libdebuginfod.so.1, kfold exited $rc, said:"; cat "$tmp/d.err"
		cmp "$tmp/d.out" "$tmp/fold.ref"; fail=1
	fi
	# DEBUGINFOD_URLS empty is no server: no warning
	if [ -n "$files" ]; then
		DEBUGINFOD_URLS= hidden "$kfold" "${KF_CASE[@]}" "$cap" > "$tmp/d.out" 2> "$tmp/d.err"
	else
		DEBUGINFOD_URLS= "$kfold" "${KF_CASE[@]}" "$cap" > "$tmp/d.out" 2> "$tmp/d.err"
	fi
	if cmp -s "$tmp/d.err" "$tmp/fold.ref.err" && cmp -s "$tmp/d.out" "$tmp/fold.ref"; then
		echo "ok   without libdebuginfod.so.1, DEBUGINFOD_URLS empty: no warning"
	else
		echo "FAIL: without libdebuginfod.so.1 and DEBUGINFOD_URLS empty, kfold said:"; cat "$tmp/d.err"; fail=1
	fi
else
	echo "ok   (not root or no unshare -m: libdebuginfod not hidden)"
fi

exit $fail
