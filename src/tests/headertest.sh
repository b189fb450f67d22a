#!/usr/bin/env bash
# headertest.sh SRC [CONFIGURED...] - include/kfold.h through headertest.c
# (C11) and headertest.cpp (C++11, C++17), -pedantic-errors -Werror,
# compile only, with each of gcc, clang, g++ and clang++ that is installed
# and is not a configured compiler (CONFIGURED: meson's compiler ids,
# "gcc" or "clang"; C++ ones as "c++:gcc"): the meson-built headertest-*
# programs already compile, link and run with those.  The compilers run
# side by side.  Skips (77) when there is no other compiler to try.
set -u
src=$1
shift
configured=" $* "
tests=$src/src/tests
strict=(-pedantic-errors -Werror -Wall -Wextra -fsyntax-only -I "$src/include" -I "$tests")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
n=0
job() {   # compiler and flags; output and status in $tmp/N.*
	n=$((n + 1))
	echo "$*" >"$tmp/$n.cmd"
	( "$@" >"$tmp/$n.out" 2>&1; echo $? >"$tmp/$n.rc" ) &
}
for cc in gcc clang; do
	if [[ $configured == *" $cc "* ]]; then
		echo "skip $cc: the configured C compiler (headertest-c11)"
	elif ! command -v "$cc" >/dev/null; then
		echo "skip $cc: not installed"
	else
		job "$cc" -std=c11 -U_GNU_SOURCE "${strict[@]}" "$tests/headertest.c"
	fi
done
for cxx in g++:gcc clang++:clang; do
	if [[ $configured == *" c++:${cxx#*:} "* ]]; then
		echo "skip ${cxx%:*}: the configured C++ compiler (headertest-c++*)"
	elif ! command -v "${cxx%:*}" >/dev/null; then
		echo "skip ${cxx%:*}: not installed"
	else
		for std in c++11 c++17; do
			job "${cxx%:*}" -std=$std "${strict[@]}" "$tests/headertest.cpp"
		done
	fi
done
wait
[ "$n" -gt 0 ] || exit 77
fail=0
for ((i = 1; i <= n; i++)); do
	if [ "$(cat "$tmp/$i.rc")" = 0 ]; then
		echo "ok   $(cat "$tmp/$i.cmd")"
	else
		echo "FAIL $(cat "$tmp/$i.cmd")"
		cat "$tmp/$i.out"
		fail=1
	fi
done
exit "$fail"
