#!/usr/bin/env bash
# cli.sh KFOLD SRCDIR: exit statuses, messages and input forms of the
# command (README "Exit status").
set -uo pipefail
kfold=$1
src=$2
cases=$src/testdata/cases
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
opts=("${KF_FLAGS[@]}")

expect() {   # expect NAME STATUS STDERR-PATTERN -- command...
	local name=$1 want=$2 pat=$3
	shift 4
	"$@" > "$tmp/out" 2> "$tmp/err"
	local got=$?
	if [ "$got" != "$want" ]; then
		echo "FAIL $name: exit $got, want $want"; cat "$tmp/err"; fail=1; return
	fi
	if [ -n "$pat" ] && ! grep -q -- "$pat" "$tmp/err"; then
		echo "FAIL $name: stderr lacks '$pat':"; cat "$tmp/err"; fail=1; return
	fi
	echo "ok   $name"
}

printf 'not a capture at all, just text\n' > "$tmp/text"
: > "$tmp/empty"
expect "non-perf file" 2 "offset 0: not a perf.data" -- "$kfold" "$tmp/text"
expect "empty file" 2 "empty" -- "$kfold" "$tmp/empty"
expect "missing file" 2 "No such file" -- "$kfold" "$tmp/nonexistent"
expect "bad option" 2 "" -- "$kfold" --no-such-option
expect "bad compat" 2 "compat" -- "$kfold" --compat=bogus "$cases/syscall/perf.data"
expect "bad context" 2 "frames or verdict" -- "$kfold" --context=bogus "$cases/syscall/perf.data"
expect "bad exclude" 2 "not a list" -- "$kfold" --exclude idle,bogus "$cases/syscall/perf.data"
expect "bad format" 2 "folded or json" -- "$kfold" --format xml "$cases/syscall/perf.data"
expect "json and explain" 2 "exclude each other" -- "$kfold" --format json --explain "$cases/syscall/perf.data"
expect "contexts in compat" 2 "kfold's own" -- "$kfold" --compat=perf --context "$cases/syscall/perf.data"
expect "json in compat" 2 "kfold's own" -- "$kfold" --compat=perf --format json "$cases/syscall/perf.data"
# a software clock: --context warns that hard IRQs cannot be seen
expect "software clock warning" 0 "software clock" -- "$kfold" "${opts[@]}" --context "$cases/syscall/perf.data"
expect "help" 0 "" -- "$kfold" --help
grep -q -- "--compat=perf" "$tmp/out" || { echo "FAIL help text"; fail=1; }

# a killed perf record: data.size 0, read to the end, exit 0 with a warning
expect "killed capture" 0 "did not finish" -- "$kfold" "${opts[@]}" "$cases/killed/perf.data"
[ -s "$tmp/out" ] || { echo "FAIL killed: no output"; fail=1; }
# ... also when its last record is cut
size=$(stat -c %s "$cases/killed/perf.data")
head -c $((size - 20)) "$cases/killed/perf.data" > "$tmp/killed-cut"
expect "killed, cut record" 0 "cut short" -- "$kfold" "${opts[@]}" "$tmp/killed-cut"

# a copy cut in the middle of its data: output of the readable part, exit 1
size=$(stat -c %s "$cases/syscall/perf.data")
head -c $((size / 2)) "$cases/syscall/perf.data" > "$tmp/half"
expect "truncated copy" 1 "offset 0x" -- "$kfold" "${opts[@]}" "$tmp/half"
[ -s "$tmp/out" ] || { echo "FAIL truncated: no output"; fail=1; }

# a broken record size in the middle
cp "$cases/syscall/perf.data" "$tmp/badsize"
printf '\x03\x00' | dd of="$tmp/badsize" bs=1 seek=$((0x15e)) conv=notrunc status=none
expect "record size < 8" 1 "has size 3" -- "$kfold" "${opts[@]}" "$tmp/badsize"

# pipe mode: from standard input equals from the file
"$kfold" "${opts[@]}" "$cases/pipe/perf.data" > "$tmp/from-file" 2>/dev/null
expect "stdin" 0 "" -- bash -c "cat '$cases/pipe/perf.data' | '$kfold' ${opts[*]} -"
cmp -s "$tmp/out" "$tmp/from-file" || { echo "FAIL stdin output differs"; fail=1; }
expect "stdin -i -" 0 "" -- bash -c "'$kfold' ${opts[*]} -i - < '$cases/pipe/perf.data'"
cmp -s "$tmp/out" "$tmp/from-file" || { echo "FAIL -i - output differs"; fail=1; }
# a pipe stream cut inside a record: a cut capture, exit 0
size=$(stat -c %s "$cases/pipe/perf.data")
expect "cut stream" 0 "cut short" -- bash -c "head -c $((size - 13)) '$cases/pipe/perf.data' | '$kfold' ${opts[*]} -"

# -o writes the file; --stats reports counts
expect "output file" 0 "samples" -- "$kfold" "${opts[@]}" --stats -o "$tmp/o.folded" "$cases/syscall/perf.data"
[ -s "$tmp/o.folded" ] || { echo "FAIL -o: empty"; fail=1; }
# kernel symbols: a capture whose kernel build-id is not in any kallsyms
# given gets none (live.sh checks that /proc/kallsyms of another running
# kernel is not taken either) ...
python3 - "$cases/syscall/perf.data" "$tmp/otherkernel" <<'PY'
import sys
d = bytearray(open(sys.argv[1], 'rb').read())
i = d.rfind(b'[kernel.kallsyms]\0')
assert i > 0
d[i - 24] ^= 0xff            # first byte of that entry's build-id
open(sys.argv[2], 'wb').write(d)
PY
expect "other kernel" 0 "" -- "$kfold" --symfs "$src/testdata/symfs" --buildid-dir "$tmp/none" "$tmp/otherkernel"
grep -q '\[\[kernel.kallsyms\]\]' "$tmp/out" || { echo "FAIL other kernel: kernel frames named"; fail=1; }
grep -q 'entry_SYSCALL' "$tmp/out" && { echo "FAIL other kernel: names from the wrong kernel"; fail=1; }
# ... but from a build-id cache holding that kernel's kallsyms
bid=$(python3 -c "import sys; d=open(sys.argv[1],'rb').read(); i=d.rfind(b'[kernel.kallsyms]\\0'); print(d[i-24:i-4].hex())" "$tmp/otherkernel")
mkdir -p "$tmp/cache/[kernel.kallsyms]/$bid"
zstd -dqf "$src/testdata/kallsyms.zst" -o "$tmp/cache/[kernel.kallsyms]/$bid/kallsyms"
expect "kallsyms from the build-id cache" 0 "" -- "$kfold" --symfs "$src/testdata/symfs" --buildid-dir "$tmp/cache" "$tmp/otherkernel"
grep -q 'entry_SYSCALL' "$tmp/out" || { echo "FAIL: kallsyms from the cache not used"; fail=1; }
# a perf build-id cache (perf archive layout) instead of a symfs: the
# binary and libc are found by build-id, not by their recorded paths
bid=$(python3 - "$cases/syscall/perf.data" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
# the BUILD_ID entry: 20 id bytes, the size byte (20), 3 pad, the name
i = -1
while True:
    i = d.find(b'/tmp/kfold-fx/bin/syscall\0', i + 1)
    if i < 0 or d[i - 4] == 20:
        break
print(d[i - 24:i - 4].hex())
PY
)
cache=$tmp/bcache
mkdir -p "$cache/.build-id/${bid:0:2}" "$cache/tmp/kfold-fx/bin/syscall/$bid"
cp "$src/testdata/symfs/tmp/kfold-fx/bin/syscall" "$cache/tmp/kfold-fx/bin/syscall/$bid/elf"
ln -s "../../tmp/kfold-fx/bin/syscall/$bid" "$cache/.build-id/${bid:0:2}/${bid:2}"
expect "build-id cache" 0 "" -- "$kfold" -q --buildid-dir "$cache" \
	--kallsyms "$tmp/cache/[kernel.kallsyms]/"*/kallsyms --symfs "$tmp/emptysymfs" \
	--buildid-dir "$cache" "$cases/syscall/perf.data"
grep -q 'main;do_io' "$tmp/out" || { echo "FAIL: names not taken from the build-id cache"; head -3 "$tmp/out"; fail=1; }
# a link in the cache that leads outside it is not followed
rm "$cache/.build-id/${bid:0:2}/${bid:2}"
ln -s "$src/testdata/symfs/tmp/kfold-fx/bin" "$cache/.build-id/${bid:0:2}/${bid:2}"
expect "cache link out of the cache" 0 "" -- "$kfold" -q --kallsyms "$tmp/cache/[kernel.kallsyms]/"*/kallsyms \
	--symfs "$tmp/emptysymfs" --buildid-dir "$cache" "$cases/syscall/perf.data"
grep -q 'main;do_io' "$tmp/out" && { echo "FAIL: followed a link out of the cache"; fail=1; }
# time order matters on the "ordering" capture: read in file order, a
# sample of an exec'ing shell child comes before its COMM and MMAPs
o=("${opts[@]}" --kallsyms "$tmp/cache/[kernel.kallsyms]/"*/kallsyms)
"$kfold" -q "${o[@]}" "$cases/ordering/perf.data" > "$tmp/timed"
"$kfold" -q "${o[@]}" --file-order "$cases/ordering/perf.data" > "$tmp/filed"
if cmp -s "$tmp/timed" "$tmp/filed"; then
	echo "FAIL ordering: file order folds the same"; fail=1
elif grep -q '^:[0-9]' "$tmp/timed" || ! grep -q '^:[0-9]' "$tmp/filed"; then
	echo "FAIL ordering: expected a thread without its COMM only in file order"; fail=1
else
	echo "ok   time order: $(diff "$tmp/timed" "$tmp/filed" | grep -c '^[<>]') lines differ in file order"
fi
# /tmp/perf-PID.map is in a directory anyone writes to: only a regular file
# owned by root or by the user running kfold is read, not a symlink to one,
# a FIFO (which would block a plain open) or another user's file
map=$(basename "$cases"/jit/perf-*.map)
pm=("${opts[@]}" --kallsyms "$tmp/cache/[kernel.kallsyms]/"*/kallsyms)
for kind in file symlink fifo other; do
	d=$tmp/pm-$kind
	mkdir -p "$d"
	case $kind in
	file) cp "$cases/jit/$map" "$d/$map" ;;
	symlink) ln -s "$cases/jit/$map" "$d/$map" ;;
	fifo) mkfifo "$d/$map" ;;
	other) cp "$cases/jit/$map" "$d/$map"
	       if [ "$(id -u)" -eq 0 ]; then chown 65534 "$d/$map"; else continue; fi ;;
	esac
	timeout 60 "$kfold" "${pm[@]}" --perf-map-dir "$d" "$cases/jit/perf.data" \
		> "$tmp/pm.out" 2> "$tmp/pm.err"
	rc=$?
	named=$(grep -c 'jit_hot_loop' "$tmp/pm.out")
	if [ "$kind" = file ]; then
		if [ "$rc" -eq 0 ] && [ "$named" -gt 0 ]; then
			echo "ok   perf map: a regular file of ours is read"
		else
			echo "FAIL perf map ($kind): rc $rc, $named named stacks"; fail=1
		fi
	elif [ "$rc" -eq 0 ] && [ "$named" -eq 0 ] && grep -q "perf-.*\.map: .*not read" "$tmp/pm.err"; then
		echo "ok   perf map: $(case $kind in symlink) echo 'a symlink' ;; fifo) echo 'a FIFO' ;; *) echo "another user's file" ;; esac) is refused with a warning"
	else
		echo "FAIL perf map ($kind): rc $rc, $named named stacks:"; cat "$tmp/pm.err"; fail=1
	fi
done
exit $fail
