#!/usr/bin/env bash
# noleak.sh KFOLD SRCDIR: with --no-host, kfold opens no file of this
# machine's debug places, whatever the capture: on every committed capture
# (read with the hermetic options of lib.sh), and on inline-dwz with its
# dwz file missing from the symfs, strace sees no open under
# /usr/lib/debug, /boot, ~/.debug, /proc/kallsyms, /sys/kernel or of a
# /tmp/perf-*.map.  The dwz case is the one that leaked: libdw looks for a
# missing dwz file itself, in /usr/lib/debug, unless an alternate is set
# (symbols/dwarf.c sets an empty one).  Also the folded output of that
# case is the same as with the dwz file's references left unresolved.
set -uo pipefail
kfold=$1
src=$2
command -v strace >/dev/null || { echo "SKIP: strace not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
fail=0
home=${HOME:-/root}
# LeakSanitizer cannot run under ptrace (the sanitizer build in CI)
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0

leaks() {   # leaks STRACE-LOG: the opens of this machine's debug places
	grep -oE '(open|openat|openat2)\((AT_FDCWD, )?"[^"]*"' "$1" | sed 's/.*"\(.*\)"/\1/' |
		grep -E "^(/usr/lib/debug|/boot|$home/\.debug|/proc/kallsyms|/sys/kernel|/tmp/perf-)" || true
}

n=0
for dir in "$src"/testdata/cases/*/ "$src"/testdata/annotate/*/; do
	dir=${dir%/}
	[ -f "$dir/perf.data" ] || continue
	kf_case "$dir"
	strace -f -qq -e trace=open,openat,openat2 -o "$tmp/st" \
		"$kfold" --no-host -q "${KF_CASE[@]}" "$dir/perf.data" > /dev/null 2> "$tmp/err"
	rc=$?
	if [ $rc -gt 1 ]; then
		echo "FAIL $(basename "$dir"): exit $rc: $(head -3 "$tmp/err")"
		fail=1
	fi
	l=$(leaks "$tmp/st")
	if [ -n "$l" ]; then
		echo "FAIL $(basename "$dir"): opened $(echo "$l" | head -3 | tr '\n' ' ')"
		fail=1
	fi
	n=$((n + 1))
done
echo "ok   $n captures: no open of this machine's debug places with --no-host"

# inline-dwz without its dwz file
mkdir -p "$tmp/symfs"
cp -a "$src/testdata/symfs/." "$tmp/symfs/"
rm -rf "$tmp/symfs/usr/lib/debug/.dwz"
strace -f -qq -e trace=open,openat,openat2 -o "$tmp/st" \
	"$kfold" --no-host --symfs "$tmp/symfs" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" \
	"$src/testdata/cases/inline-dwz/perf.data" > "$tmp/out" 2> "$tmp/err"
rc=$?
l=$(leaks "$tmp/st")
if [ $rc -ne 0 ]; then
	echo "FAIL inline-dwz without its dwz file: exit $rc: $(grep -v '^kfold: ' "$tmp/err" | head -3)"
	fail=1
elif [ -n "$l" ]; then
	echo "FAIL inline-dwz without its dwz file: opened $(echo "$l" | tr '\n' ' ')"
	fail=1
elif ! grep -q "dwz file.*not found" "$tmp/err" || ! [ -s "$tmp/out" ]; then
	echo "FAIL inline-dwz without its dwz file: no warning or no output"
	fail=1
else
	echo "ok   inline-dwz without its dwz file: a warning, and libdw looked nowhere"
fi
exit $fail
