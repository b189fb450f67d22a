#!/usr/bin/env bash
# minidebuginfo.sh KFOLD SRCDIR: names from MiniDebugInfo (.gnu_debugdata).
#
# The committed `threads` capture (frame pointers) has the fixture program
# /tmp/kfold-fx/bin/threads in its stacks, with functions that are not in
# its .dynsym (alpha_inner, beta_hash, main_spin...).  In a private copy
# of the symfs that program is replaced by:
#   stripped   objcopy --strip-all: .dynsym only (the build-id note stays,
#              so the recorded build-id still matches)
#   mdi        stripped, plus a .gnu_debugdata built the way Fedora's
#              find-debuginfo does: the FUNC symbols not in .dynsym, kept
#              in an --only-keep-debug copy stripped of everything else
#              (objcopy -S --keep-symbols), xz-compressed
#   broken     stripped, plus a .gnu_debugdata that is truncated, has a
#              flipped bit, declares a huge size, is a decompression bomb,
#              is not an ELF, or belongs to another binary
# and shows:
#   (a) stripped: the program's own functions are [threads] frames;
#   (b) mdi: kfold --no-inline gives exactly its output on the original;
#   (c) broken: a warning, the [threads] frames of (a), exit status 0;
#   (d) mdi, --compat=perf: equal to perf 6.1's own output on that symfs
#       (hermetic, as scripts/oracle.sh runs it; perf must be installed).
#   (f) kfold archive of the mdi run: the bundle, read with the symfs
#       copy gone, gives (b)'s stacks and --stats;
#   (e) a static program (no .dynsym at all), built now with gcc -static,
#       in a capture written by MKCAPTURE (recording needs permissions a
#       test cannot count on): named from its MiniDebugInfo as unstripped,
#       [prog] without it, and --compat=perf equal to perf again.
set -uo pipefail
kfold=$1
src=$2
mkcapture=$3
case_dir=$src/testdata/cases/threads
prog=tmp/kfold-fx/bin/threads
tmp=$(mktemp -d)
trap '[ -n "${KEEP_TMP:-}" ] || rm -rf "$tmp"' EXIT
fail=0

# no skipping: scripts/setup.sh installs every one of these
for tool in gcc objcopy nm readelf xz zstd python3 perf; do
	command -v "$tool" >/dev/null || { echo "FAIL: $tool not found (scripts/setup.sh installs it)"; exit 1; }
done

. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
mkdir -p "$tmp/emptycache" "$tmp/home" "$tmp/work"
: > "$tmp/perfconfig"
cp -a "$src/testdata/symfs" "$tmp/symfs"
orig=$src/testdata/symfs/$prog

# ---- the fixture files ------------------------------------------------------
objcopy --strip-all "$orig" "$tmp/stripped" || exit 1
objcopy --only-keep-debug "$orig" "$tmp/debug" || exit 1
nm -D --format=posix --defined-only "$tmp/stripped" | awk '{ print $1 }' | sort > "$tmp/dynsyms"
nm --format=sysv --defined-only "$tmp/debug" |
	awk -F'|' '$4 ~ /FUNC/ { gsub(/ /, "", $1); print $1 }' | sort > "$tmp/funcsyms"
comm -13 "$tmp/dynsyms" "$tmp/funcsyms" > "$tmp/keep"
objcopy -S --remove-section .gdb_index --remove-section .comment \
	--keep-symbols="$tmp/keep" "$tmp/debug" "$tmp/mini" || exit 1
xz -k "$tmp/mini" || exit 1

# add_mdi FILE.xz OUT: the stripped program with FILE.xz as .gnu_debugdata
add_mdi() {
	objcopy --add-section .gnu_debugdata="$1" "$tmp/stripped" "$2"
}
add_mdi "$tmp/mini.xz" "$tmp/mdi" || exit 1

# the fixture is what the test means it to be
for f in alpha_inner beta_hash main_spin gamma_syscalls; do
	grep -qx "$f" "$tmp/keep" || { echo "FAIL: fixture: $f is not among the MiniDebugInfo symbols"; fail=1; }
done
if [ -n "$(nm "$tmp/stripped" 2>/dev/null)" ]; then
	echo "FAIL: fixture: the stripped program still has a .symtab"
	fail=1
fi
bid() { LC_ALL=C readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
if [ "$(bid "$tmp/mdi")" != "$(bid "$orig")" ] || [ -z "$(bid "$orig")" ]; then
	echo "FAIL: fixture: the build-id changed"
	fail=1
fi

# run_kfold BINARY OUT [kfold args...]: kfold on the capture with BINARY
# in place of the program; stderr to OUT.err, exit status to OUT.rc
run_kfold() {
	local bin=$1 out=$2
	shift 2
	rm -f "$tmp/symfs/$prog"
	cp "$bin" "$tmp/symfs/$prog"
	"$kfold" --symfs "$tmp/symfs" --kallsyms "$KF_KALLSYMS" \
		--buildid-dir "$KF_NOCACHE" --no-inline "$@" \
		"$case_dir/perf.data" > "$out" 2> "$out.err"
	echo $? > "$out.rc"
}

run_kfold "$orig" "$tmp/orig.folded"
run_kfold "$tmp/stripped" "$tmp/stripped.folded"
run_kfold "$tmp/mdi" "$tmp/mdi.folded" --stats

for o in orig stripped mdi; do
	if [ "$(cat "$tmp/$o.folded.rc")" != 0 ]; then
		echo "FAIL $o: kfold exited $(cat "$tmp/$o.folded.rc")"
		cat "$tmp/$o.folded.err"
		fail=1
	fi
done
# the original names the program's functions (else (a) and (b) prove nothing)
for f in alpha_inner beta_hash main_spin; do
	grep -q ";$f[; ]" "$tmp/orig.folded" ||
		{ echo "FAIL orig: no $f frame on the original"; fail=1; }
done

# (a) stripped: [threads] frames, none of those names
if ! grep -q ';\[threads\]' "$tmp/stripped.folded"; then
	echo "FAIL (a): no [threads] frame for the stripped program"
	fail=1
fi
if grep -qE ';(alpha_inner|beta_hash|main_spin)[; ]' "$tmp/stripped.folded"; then
	echo "FAIL (a): names for the stripped program without MiniDebugInfo:"
	grep -E 'alpha_inner|beta_hash|main_spin' "$tmp/stripped.folded" | head -3
	fail=1
fi

# (f) a bundle of the mdi run carries the MiniDebugInfo
"$kfold" archive -q --symfs "$tmp/symfs" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" \
	"$case_dir/perf.data" -o "$tmp/mdi.tar.zst" 2> "$tmp/mdi.arerr" ||
	{ echo "FAIL (f): kfold archive: $(head -2 "$tmp/mdi.arerr")"; fail=1; }
mv "$tmp/symfs" "$tmp/symfs.away"
"$kfold" --no-inline --stats "$tmp/mdi.tar.zst" > "$tmp/mdi-b.folded" 2> "$tmp/mdi-b.err"
mv "$tmp/symfs.away" "$tmp/symfs"
if cmp -s "$tmp/mdi.folded" "$tmp/mdi-b.folded" && cmp -s "$tmp/mdi.folded.err" "$tmp/mdi-b.err"; then
	echo "ok   (f) the bundle of the MiniDebugInfo run gives its stacks and --stats without the files"
else
	echo "FAIL (f): the bundle's output differs:"
	diff "$tmp/mdi.folded" "$tmp/mdi-b.folded" | head -5
	diff "$tmp/mdi.folded.err" "$tmp/mdi-b.err" | head -5
	fail=1
fi

# (b) MiniDebugInfo: the original's output exactly, and --stats says why
if ! diff -u "$tmp/orig.folded" "$tmp/mdi.folded" > "$tmp/d"; then
	echo "FAIL (b): with .gnu_debugdata the output differs from the original's:"
	head -20 "$tmp/d"
	fail=1
fi
if ! grep -q "^kfold:   names of the functions not in .dynsym from its .gnu_debugdata (MiniDebugInfo)" "$tmp/mdi.folded.err"; then
	echo "FAIL (b): --stats does not say the names came from the MiniDebugInfo"
	fail=1
fi
if grep -q "MiniDebugInfo" "$tmp/stripped.folded.err"; then
	echo "FAIL (a): a warning about a MiniDebugInfo the file does not have"
	fail=1
fi

# ---- (c) broken MiniDebugInfo ------------------------------------------------
size=$(stat -c %s "$tmp/mini.xz")
head -c $((size / 2)) "$tmp/mini.xz" > "$tmp/bad-truncated.xz"
# one bit flipped in the middle of the compressed data (the xz check or
# the LZMA2 decoder must notice)
python3 - "$tmp/mini.xz" "$tmp/bad-bitflip.xz" <<'PY'
import sys
d = bytearray(open(sys.argv[1], "rb").read())
d[len(d) // 2] ^= 0x10
open(sys.argv[2], "wb").write(d)
PY
# a well-formed stream whose block header and index declare 2^62 bytes
# of output around the real data: only an allocation sized from the
# header would hurt.  The same stream declaring the true size is the
# control: it must work (so the failure is the size's).
cat > "$tmp/xz-declared.py" <<'PY'
# xz-declared.py IN OUT SIZE: IN as an .xz stream whose block header and
# index declare SIZE bytes of output ("true": IN's size)
import lzma, struct, sys, zlib
data = open(sys.argv[1], "rb").read()
size = len(data) if sys.argv[3] == "true" else int(sys.argv[3])
def vli(n):
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7f | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)
def crc(b):
    return struct.pack("<I", zlib.crc32(b) & 0xffffffff)
def pad4(b):
    return b + bytes(-len(b) % 4)
flags = b"\x00\x01"                                     # CRC32 check
out = b"\xfd7zXZ\x00" + flags + crc(flags)
raw = lzma.compress(data, format=lzma.FORMAT_RAW,
                    filters=[{"id": lzma.FILTER_LZMA2, "dict_size": 1 << 20}])
# block flags: one filter, uncompressed size present; LZMA2 with the
# dictionary size property 16 (1 MiB, as compressed)
body = bytes([0x80]) + vli(size) + vli(0x21) + vli(1) + bytes([16])
hsize = (1 + len(body) + 4 + 3) // 4 * 4
hdr = bytes([hsize // 4 - 1]) + body
hdr = hdr + bytes(hsize - 4 - len(hdr))
hdr += crc(hdr)
block = hdr + raw
unpadded = len(block) + 4
out += pad4(block) + crc(data)
index = b"\x00" + vli(1) + vli(unpadded) + vli(size)
index = pad4(index)
index += crc(index)
out += index
back = struct.pack("<I", len(index) // 4 - 1)
out += crc(back + flags) + back + flags + b"YZ"
open(sys.argv[2], "wb").write(out)
PY
python3 "$tmp/xz-declared.py" "$tmp/mini" "$tmp/bad-hugesize.xz" $((1 << 62)) || exit 1
python3 "$tmp/xz-declared.py" "$tmp/mini" "$tmp/declared.xz" true || exit 1
add_mdi "$tmp/declared.xz" "$tmp/declared" || exit 1
run_kfold "$tmp/declared" "$tmp/declared.folded"
if ! diff -u "$tmp/orig.folded" "$tmp/declared.folded" > "$tmp/d"; then
	echo "FAIL (c): the control (the crafted stream with its true size) does not work:"
	head -5 "$tmp/declared.folded.err"
	fail=1
fi
# a decompression bomb: 257 MiB of zeros, more than the 256 MiB allowed
head -c $((257 << 20)) /dev/zero | xz -0 -T1 > "$tmp/bad-bomb.xz"
# valid xz, not an ELF
printf 'not an ELF file\n' | xz > "$tmp/bad-notelf.xz"
# another program's MiniDebugInfo (its build-id note names that program)
other=$src/testdata/symfs/tmp/kfold-fx/bin/syscall
objcopy --only-keep-debug "$other" "$tmp/other.debug" &&
	objcopy -S --keep-symbols="$tmp/keep" "$tmp/other.debug" "$tmp/other.mini" &&
	xz -c "$tmp/other.mini" > "$tmp/bad-otherbinary.xz" || exit 1

declare -A expect=(
	[truncated]="truncated xz data"
	[bitflip]="corrupt xz data"
	[hugesize]="corrupt xz data"
	[bomb]="xz data larger than the size allowed"
	[notelf]="the xz data is not an ELF file"
	[otherbinary]="its build-id is not the binary's"
)
for kind in truncated bitflip hugesize bomb notelf otherbinary; do
	add_mdi "$tmp/bad-$kind.xz" "$tmp/bad-$kind" || { echo "FAIL (c) $kind: objcopy"; fail=1; continue; }
	run_kfold "$tmp/bad-$kind" "$tmp/bad-$kind.folded"
	rc=$(cat "$tmp/bad-$kind.folded.rc")
	if [ "$rc" != 0 ]; then
		echo "FAIL (c) $kind: kfold exited $rc"
		head -5 "$tmp/bad-$kind.folded.err"
		fail=1
		continue
	fi
	if ! grep -q "threads: its .gnu_debugdata (MiniDebugInfo) is not used: ${expect[$kind]}; " "$tmp/bad-$kind.folded.err"; then
		echo "FAIL (c) $kind: no warning \"${expect[$kind]}\"; stderr:"
		head -5 "$tmp/bad-$kind.folded.err"
		fail=1
	fi
	if ! diff -u "$tmp/stripped.folded" "$tmp/bad-$kind.folded" > "$tmp/d"; then
		echo "FAIL (c) $kind: output differs from the plainly stripped program's:"
		head -10 "$tmp/d"
		fail=1
	fi
done

# ---- (d) --compat=perf against perf itself ---------------------------------------
run_kfold "$tmp/mdi" "$tmp/compat.folded" --compat=perf --stats
if [ "$(cat "$tmp/compat.folded.rc")" != 0 ]; then
	echo "FAIL (d): kfold --compat=perf exited $(cat "$tmp/compat.folded.rc")"
	fail=1
fi
# perf_folded CAPTURE SYMFS OUT: perf 6.1's folded output, run as
# scripts/oracle.sh runs it (empty config, HOME and build-id cache)
perf_folded() {
	local rc
	(cd "$tmp/work" && HOME=$tmp/home PERF_CONFIG=$tmp/perfconfig LC_ALL=C PATH=/usr/bin:/bin \
		perf --buildid-dir "$KF_NOCACHE" script -i "$1" \
		--symfs "$2" --kallsyms "$KF_KALLSYMS" --no-inline \
		> "$3.txt" 2> "$3.err")
	rc=$?
	if [ $rc != 0 ] || [ ! -s "$3.txt" ]; then
		echo "FAIL: perf script on $1 exited $rc"
		head -5 "$3.err"
		return 1
	fi
	python3 "$src/scripts/collapse-perf.py" "$3.txt" > "$3"
}
# the symfs still has the program with MiniDebugInfo (run_kfold put it there)
perf_folded "$case_dir/perf.data" "$tmp/symfs" "$tmp/perf.folded" || fail=1
if ! diff -u "$tmp/perf.folded" "$tmp/compat.folded" > "$tmp/d"; then
	echo "FAIL (d): --compat=perf differs from perf script on the MiniDebugInfo symfs:"
	head -20 "$tmp/d"
	fail=1
fi
if ! grep -q "^kfold:   .gnu_debugdata (MiniDebugInfo) not read: --compat=perf" "$tmp/compat.folded.err"; then
	echo "FAIL (d): --stats does not say --compat=perf left the MiniDebugInfo unread"
	fail=1
fi
# what perf 6.1 does, for the record (the README says so)
if cmp -s "$tmp/perf.folded" "$tmp/stripped.folded"; then
	echo "note: perf names nothing from .gnu_debugdata: --compat=perf leaves it unread"
else
	echo "note: perf's output differs from the plainly stripped program's"
fi

# ---- (e) a static program -------------------------------------------------------
mkdir -p "$tmp/static/sfs/bin"
cat > "$tmp/static/prog.c" <<'EOF'
/* static functions, kept apart (noipa) so the call path survives -O2 */
__attribute__((noipa)) static int inner(int x)
{
	for (volatile int i = 0; i < 10; i++)
		x += i;
	return x;
}
__attribute__((noipa)) static int outer(int x)
{
	return inner(x) + 1;
}
int main(int argc, char **argv)
{
	(void)argv;
	return outer(argc) & 1;
}
EOF
(
	cd "$tmp/static" || exit 1
	gcc -std=gnu11 -O2 -static -o prog prog.c || exit 1
	objcopy --strip-all prog stripped || exit 1
	objcopy --only-keep-debug prog debug || exit 1
	# no .dynsym: every function goes in
	nm --format=sysv --defined-only debug |
		awk -F'|' '$4 ~ /FUNC/ { gsub(/ /, "", $1); print $1 }' | sort -u > keep
	objcopy -S --remove-section .gdb_index --remove-section .comment \
		--keep-symbols=keep debug mini || exit 1
	xz -k mini || exit 1
	objcopy --add-section .gnu_debugdata=mini.xz stripped mdi || exit 1
	if readelf -SW prog | grep -qw .dynsym; then
		echo "FAIL (e): fixture: the static program has a .dynsym"
		exit 1
	fi
) || fail=1
addr() { nm "$tmp/static/prog" 2>/dev/null | awk -v f="$1" '$3 == f { print "0x" $1 }'; }
# the executable PT_LOAD, mapped as the kernel maps it
read -r s_off s_vaddr s_len < <(readelf -lW "$tmp/static/prog" 2>/dev/null |
	awk '$1 == "LOAD" && $7 == "R" && $8 == "E" { print $2, $3, $6 }')
inner=$(addr inner) outer=$(addr outer) main=$(addr main)
if [ -z "$inner" ] || [ -z "$outer" ] || [ -z "$main" ] || [ -z "${s_vaddr:-}" ]; then
	echo "FAIL (e): fixture: no inner/outer/main or no executable segment"
	fail=1
else
	# the leaf inside inner, return addresses inside outer and main
	"$mkcapture" "$tmp/static/perf.data" /bin/prog prog "$s_vaddr" "$s_len" "$s_off" \
		$((inner + 2)) $((outer + 8)) $((main + 8)) || fail=1
	static_run() {   # static_run BINARY OUT [kfold args]
		local bin=$1 out=$2
		shift 2
		rm -f "$tmp/static/sfs/bin/prog"
		cp "$tmp/static/$bin" "$tmp/static/sfs/bin/prog"
		"$kfold" --symfs "$tmp/static/sfs" --no-inline "$@" "$tmp/static/perf.data" \
			> "$out" 2> "$out.err" || { echo "FAIL (e): kfold on $bin exited $?"; fail=1; }
	}
	static_run prog "$tmp/static/prog.folded"
	static_run stripped "$tmp/static/stripped.folded"
	static_run mdi "$tmp/static/mdi.folded"
	static_run mdi "$tmp/static/compat.folded" --compat=perf
	if [ "$(cat "$tmp/static/prog.folded")" != "prog;main;outer;inner 1000" ]; then
		echo "FAIL (e): the unstripped static program gives:"
		cat "$tmp/static/prog.folded"
		fail=1
	fi
	if [ "$(cat "$tmp/static/stripped.folded")" != "prog;[prog];[prog];[prog] 1000" ]; then
		echo "FAIL (e): the stripped static program gives:"
		cat "$tmp/static/stripped.folded"
		fail=1
	fi
	if ! cmp -s "$tmp/static/prog.folded" "$tmp/static/mdi.folded"; then
		echo "FAIL (e): with .gnu_debugdata the static program gives:"
		cat "$tmp/static/mdi.folded" "$tmp/static/mdi.folded.err"
		fail=1
	fi
	# the symfs still has the program with MiniDebugInfo
	perf_folded "$tmp/static/perf.data" "$tmp/static/sfs" "$tmp/static/perf.folded" || fail=1
	if ! diff -u "$tmp/static/perf.folded" "$tmp/static/compat.folded" > "$tmp/d"; then
		echo "FAIL (e): --compat=perf differs from perf script on the static program:"
		head -10 "$tmp/d"
		fail=1
	fi
fi

[ $fail -eq 0 ] && echo "minidebuginfo: ok"
exit $fail
