#!/usr/bin/env bash
# perfarchive-live.sh KFOLD SRCDIR: a real `perf archive` tarball read in
# place with --buildid-dir perf.data.tar.bz2 (issue 14).  A program
# (testdata/src/syscall.c) is built now and recorded with -g into a private
# build-id cache (perf --buildid-dir), which `perf archive` packs; then
# the program is deleted, so only the cache names its frames.  The tarball
# extracted by GNU tar into a directory is the oracle:
#   1. perf --buildid-dir DIR script | collapse-perf.py equals kfold
#      --compat=perf --buildid-dir TARBALL (perf's own reading of the
#      extracted cache, the same kallsyms given to both);
#   2. kfold's outputs (fold, --srcline, report, fold --symfs EMPTY) with
#      the tarball equal those with the extracted directory, and name the
#      deleted program's functions, which an empty cache does not, and
#      with --symfs (no /proc/kallsyms) the kernel's from its kallsyms;
#   3. kfold archive --buildid-dir TARBALL makes a bundle that, read with
#      the tarball gone, gives the same folded stacks;
#   4. `perf archive --all`, where this perf has it, is read the same way.
# Asserts about its own workload only.
set -uo pipefail
kfold=$(realpath "$1")
src=$(realpath "$2")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/live-lib.sh"
live_need perf gcc tar bzip2
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
fail=0

prog=$tmp/kfold-palive
gcc -std=gnu11 -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -fno-inline -I "$src/testdata/src" \
	-o "$prog" "$src/testdata/src/syscall.c" || exit 1
live_kallsyms "$tmp/kallsyms"
mkdir -p "$tmp/home" "$tmp/cache" "$tmp/empty" "$tmp/x"
: > "$tmp/perfconfig"
export HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C
cd "$tmp" || exit 1

perf --buildid-dir "$tmp/cache" record -q -e cpu-clock -F 999 -g -o p.data -- "$prog" 0.3 \
	> rec.log 2>&1 || { cat rec.log; skip "perf record cannot run here"; }
perf --buildid-dir "$tmp/cache" archive p.data > arch.log 2>&1 ||
	{ cat arch.log; echo "FAIL: perf archive"; exit 1; }
[ -s p.data.tar.bz2 ] || { echo "FAIL: perf archive wrote no p.data.tar.bz2"; exit 1; }
tar -tvjf p.data.tar.bz2 > list.txt
grep -q "^l.* \.build-id/.* -> \.\./\.\./" list.txt ||
	{ echo "FAIL: the tarball has no .build-id links: not perf archive's layout?"; cat list.txt; fail=1; }
grep -q "kfold-palive/[0-9a-f]\{40\}/elf$" list.txt ||
	{ echo "FAIL: the program's elf is not in the tarball"; cat list.txt; fail=1; }
tar -xjf p.data.tar.bz2 -C "$tmp/x" || { echo "FAIL: GNU tar cannot extract it"; exit 1; }
rm -f "$prog"
T=$tmp/p.data.tar.bz2

# 1. perf on the extracted cache
perf --buildid-dir "$tmp/x" script -i p.data --kallsyms "$tmp/kallsyms" --no-inline \
	2>/dev/null > script.txt
python3 "$src/scripts/collapse-perf.py" script.txt > want
grep -q 'do_io' want || { echo "FAIL: perf does not name the program from the extracted cache"; fail=1; }
"$kfold" -q --compat=perf --no-inline --kallsyms "$tmp/kallsyms" --buildid-dir "$T" p.data > got ||
	{ echo "FAIL: kfold --compat=perf exit $?"; fail=1; }
if ! diff -u want got | head -20; then :; fi
cmp -s want got && echo "ok   --compat=perf with the tarball equals perf script with its extraction ($(wc -l < want) stacks)" ||
	{ echo "FAIL: kfold --compat=perf with the tarball differs from perf script with the extraction"; fail=1; }

# 2. kfold: tarball against extraction
for v in "fold" "fold --srcline" "report" "fold --symfs $tmp/empty"; do
	read -r -a words <<<"$v"
	"$kfold" "${words[@]}" --buildid-dir "$T" p.data > a.out 2> a.err; echo $? > a.rc
	"$kfold" "${words[@]}" --buildid-dir "$tmp/x" p.data > b.out 2> b.err; echo $? > b.rc
	sed -i "s#$tmp/x#$T#g" b.out b.err
	for k in out err rc; do
		cmp -s a.$k b.$k || { echo "FAIL $v: $k differs from the extracted cache's"; diff b.$k a.$k | head -5; fail=1; }
	done
done
"$kfold" --buildid-dir "$T" p.data > a.out 2>/dev/null
"$kfold" --buildid-dir "$tmp/empty" p.data > e.out 2>/dev/null
grep -q 'main;do_io' a.out || { echo "FAIL: the tarball does not name the program"; fail=1; }
# with --symfs, kfold does not read /proc/kallsyms: kernel names from the tarball
"$kfold" --symfs "$tmp/empty" --buildid-dir "$T" p.data > k.out 2>/dev/null
grep -q 'do_syscall_64' k.out || { echo "FAIL: no kernel names from the tarball's kallsyms"; fail=1; }
grep -q 'main;do_io' e.out && { echo "FAIL: the program is named without the tarball: the test proves nothing"; fail=1; }

# 3. a bundle made with the tarball
"$kfold" archive -q --buildid-dir "$T" -o b.tar.zst p.data 2> ar.err ||
	{ echo "FAIL: kfold archive: $(head -3 ar.err)"; fail=1; }
mv "$T" "$tmp/moved.tar.bz2"
"$kfold" b.tar.zst > c.out 2>/dev/null
cmp -s a.out c.out || { echo "FAIL: the bundle's stacks differ from the tarball's"; diff a.out c.out | head -5; fail=1; }
mv "$tmp/moved.tar.bz2" "$T"

# 4. perf archive --all (perf 5.19 and later)
mkdir -p all && cp p.data all/perf.data
if (cd all && perf --buildid-dir "$tmp/cache" archive --all perf.data > log 2>&1) &&
   ls all/perf.all-*.tar.bz2 >/dev/null 2>&1; then
	"$kfold" --buildid-dir "$(ls all/perf.all-*.tar.bz2 | head -1)" p.data > d.out 2>/dev/null
	cmp -s a.out d.out || { echo "FAIL: perf archive --all's tarball reads differently"; fail=1; }
	echo "ok   perf archive --all"
else
	echo "note: this perf archive has no --all"
fi
[ $fail = 0 ] && echo "ok   perf archive tarball read in place: $(wc -l < a.out) stacks"
exit $fail
