#!/usr/bin/env bash
# debugonly.sh KFOLD SRCDIR: a debug file found without its binary is not
# used to place symbols.  A debug file's program headers say nothing of
# where its code is in the mapped file (objcopy --only-keep-debug writes
# p_offset 0 for libc's text, which is at 0x26000 in libc), so its symbols
# placed with them name the wrong functions (__mpn_mul for
# __libc_start_call_main).  On the committed syscall capture, with an
# empty symfs and a build-id cache holding only libc's `debug`:
#   a) no libc frame is named: they are [libc.so.6], never __mpn_mul;
#   b) with libc itself as `elf` beside it, libc's frames are named as
#      with the full symfs (__libc_start_call_main, ...).
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
fail=0
bid=93ac61ec5a8eb1396f9fbd350e3169a558528a40
lib=usr/lib/x86_64-linux-gnu/libc.so.6
dbg=$src/testdata/symfs/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
[ -f "$dbg" ] || { echo "FAIL: fixture: $dbg is missing"; exit 1; }
mkdir -p "$tmp/empty" "$tmp/cache/$lib/$bid" "$tmp/cache/.build-id/${bid:0:2}"
cp "$dbg" "$tmp/cache/$lib/$bid/debug"
ln -s "../../$lib/$bid" "$tmp/cache/.build-id/${bid:0:2}/${bid:2}"
run() {
	"$kfold" --symfs "$tmp/empty" --kallsyms "$KF_KALLSYMS" --buildid-dir "$tmp/cache" \
		"$src/testdata/cases/syscall/perf.data" > "$tmp/$1" 2> "$tmp/$1.err"
}
run debugonly
if grep -q '__mpn_mul' "$tmp/debugonly" || ! grep -q ';\[libc\.so\.6\]' "$tmp/debugonly" ||
   grep -q '__libc_start_call_main' "$tmp/debugonly"; then
	echo "FAIL a: a debug file alone named libc's frames:"
	head -3 "$tmp/debugonly"
	fail=1
else
	echo "ok   a: a debug file without its binary names nothing: [libc.so.6] frames"
fi
cp "$src/testdata/symfs/$lib" "$tmp/cache/$lib/$bid/elf"
run both
"$kfold" "${KF_FLAGS[@]}" "$src/testdata/cases/syscall/perf.data" > "$tmp/full" 2>/dev/null
# libc's names, as the full symfs gives them (the program itself is not
# in the empty symfs, so compare the names, not the stacks)
names() { tr ';' '\n' < "$1" | sed 's/ [0-9]*$//' | grep -E '^(__libc|_IO|__GI|__clock|__write|__getppid|__GI___)' | sort -u; }
if [ -n "$(names "$tmp/full")" ] && [ "$(names "$tmp/both")" = "$(names "$tmp/full")" ] &&
   ! grep -q '__mpn_mul' "$tmp/both"; then
	echo "ok   b: with its binary beside it, libc's frames are named as with the full symfs"
else
	echo "FAIL b: elf and debug in the cache:"
	diff <(names "$tmp/full") <(names "$tmp/both") | head -5
	fail=1
fi
exit $fail
