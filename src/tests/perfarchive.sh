#!/usr/bin/env bash
# perfarchive.sh KFOLD SRCDIR: `--buildid-dir perf.data.tar.bz2` reads a
# perf archive tarball in place, as if extracted (issue 14), hermetically.
#
# The tarballs are made here with Python's tarfile, laid out as
# /usr/lib/perf-core/perf-archive writes them (`tar cjf` of
# .build-id/xx/<rest> -> ../../<path>/<bid>, the directory <path>/<bid>/
# with elf, debug, probes, and [kernel.kallsyms]/<bid>/kallsyms), from the
# files of testdata/cases/syscall under testdata/symfs, each named by the
# build-id the capture recorded (read from its BUILD_ID table, checked
# against readelf -n when binutils is here).  The oracle is the same
# tarball extracted by GNU tar into a directory given as --buildid-dir:
#   1. every output (fold, --srcline, --addrs, --no-inline, report,
#      explain, annotate) with the tarball equals the output with its
#      extraction, stdout (report paths name the tarball instead of the
#      directory), stderr and exit status; the same for the pre-perf-4.6
#      layout (<path>/<bid> the file), for the cache packed by tar -h
#      (links followed) and for `perf archive --all`'s outer tarball
#      (perf.data and perf.symbols.tar.bz2);
#   2. the names come from the tarball: with an empty cache they are not
#      there;
#   3. kfold archive --buildid-dir TARBALL writes a bundle whose outputs,
#      read with the tarball gone, are the tarball run's;
#   4. hostile tarballs: a link to outside (absolute and through ..) is
#      not followed, as in the extraction; an elf whose build-id is not its
#      directory's is dropped with a warning, and so is a hard link to a
#      member of another build-id or to no earlier member; a FIFO, a
#      device, a GNU sparse member refuse the tarball (exit 2, naming the
#      member); a truncated or damaged .bz2 and a file that is no tarball
#      are errors (exit 2).
set -uo pipefail
kfold=$(realpath "$1")
src=$(realpath "$2")
command -v tar >/dev/null || { echo "SKIP: no GNU tar"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
cap=$src/testdata/cases/syscall/perf.data
symfs=$src/testdata/symfs
fail=0
mkdir -p "$tmp/empty"

# the recorded build-ids: BUILD_ID entries are 20 id bytes, the size
# byte, 3 pad bytes, then the name
bids=$(python3 - "$cap" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
for name in (b'/tmp/kfold-fx/bin/syscall', b'/usr/lib/x86_64-linux-gnu/libc.so.6',
	     b'/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2', b'[kernel.kallsyms]'):
	i = d.find(name + b'\0')
	while i >= 0 and not (i > 24 and d[i - 4] == 20):
		i = d.find(name + b'\0', i + 1)
	assert i > 0, name
	print(d[i - 24:i - 4].hex())
PY
) || { echo "FAIL: no build-ids in $cap"; exit 1; }
read -r -d '' b_exe b_libc b_ld b_kern <<<"$bids"
echo "build-ids: $b_exe $b_libc $b_ld $b_kern"
if command -v readelf >/dev/null; then
	for p in "tmp/kfold-fx/bin/syscall $b_exe" "usr/lib/x86_64-linux-gnu/libc.so.6 $b_libc" \
		 "usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 $b_ld"; do
		set -- $p
		readelf -n "$symfs/$1" | grep -q "Build ID: $2" ||
			{ echo "FAIL: $1 has not build-id $2 (readelf)"; fail=1; }
	done
fi

# mk.py OUT LAYOUT ENTRIES...: a perf archive tarball (tar.bz2, GNU
# format as `tar cjf` writes).  An entry is PATH:BID:LEAF:SRC (LEAF
# empty: the pre-4.6 layout, <path>/<bid> the file itself), or
# raw:TYPE:NAME:ARG for a member of another kind (symlink ARG = target,
# fifo, chr, hardlink ARG = target, file ARG = source).
cat > "$tmp/mk.py" <<'PY'
import sys, tarfile, io
out = sys.argv[1]
with tarfile.open(out, 'w:bz2', format=tarfile.GNU_FORMAT) as t:
	def add(ti, data=None):
		ti.uid = ti.gid = 0
		ti.uname = ti.gname = 'root'
		t.addfile(ti, io.BytesIO(data) if data is not None else None)
	for e in sys.argv[2:]:
		f = e.split(':', 3)
		if f[0] == 'raw':
			typ, name, arg = f[1], f[2], f[3]
			ti = tarfile.TarInfo(name)
			if typ == 'symlink':
				ti.type, ti.linkname = tarfile.SYMTYPE, arg
			elif typ == 'hardlink':
				ti.type, ti.linkname = tarfile.LNKTYPE, arg
			elif typ == 'fifo':
				ti.type = tarfile.FIFOTYPE
			elif typ == 'sparse':
				ti.type = tarfile.GNUTYPE_SPARSE
			elif typ == 'chr':
				ti.type, ti.devmajor, ti.devminor = tarfile.CHRTYPE, 1, 3
			elif typ == 'file':
				data = open(arg, 'rb').read()
				ti.size = len(data)
				add(ti, data)
				continue
			add(ti)
			continue
		path, bid, leaf, srcf = f
		link = tarfile.TarInfo('.build-id/%s/%s' % (bid[:2], bid[2:]))
		link.type, link.linkname = tarfile.SYMTYPE, '../../%s/%s' % (path, bid)
		add(link)
		data = open(srcf, 'rb').read()
		if leaf:
			d = tarfile.TarInfo('%s/%s' % (path, bid))
			d.type, d.mode = tarfile.DIRTYPE, 0o755
			add(d)
			ti = tarfile.TarInfo('%s/%s/%s' % (path, bid, leaf))
		else:
			ti = tarfile.TarInfo('%s/%s' % (path, bid))
		ti.size, ti.mode = len(data), 0o755
		add(ti, data)
PY
mk() { python3 "$tmp/mk.py" "$@" || { echo "FAIL: making $1"; exit 1; }; }
dbg=$symfs/usr/lib/debug/.build-id
exe=tmp/kfold-fx/bin/syscall
libc=usr/lib/x86_64-linux-gnu/libc.so.6
ld=usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2
kern="[kernel.kallsyms]"
# perf >= 4.6: elf (libc also its debug, ld its debug only), a probes
# file, kallsyms
mk "$tmp/new.tar.bz2" \
	"$exe:$b_exe:elf:$symfs/$exe" \
	"$libc:$b_libc:elf:$symfs/$libc" \
	"raw:file:$libc/$b_libc/debug:$dbg/${b_libc:0:2}/${b_libc:2}.debug" \
	"raw:file:$libc/$b_libc/probes:$src/testdata/README.md" \
	"$ld:$b_ld:debug:$dbg/${b_ld:0:2}/${b_ld:2}.debug" \
	"$kern:$b_kern:kallsyms:$KF_KALLSYMS"
# before perf 4.6: <path>/<bid> is the file
mk "$tmp/old.tar.bz2" \
	"$exe:$b_exe::$symfs/$exe" \
	"$libc:$b_libc::$symfs/$libc" \
	"$kern:$b_kern:kallsyms:$KF_KALLSYMS"

variants=("fold" "fold --srcline" "fold --addrs" "fold --no-inline" "report" "explain"
	  "annotate --top 0")

# run NAME CACHE VARIANT...: kfold's stdout, stderr, status in $tmp/NAME.*
run() {
	local name=$1 cache=$2
	shift 2
	"$kfold" "$@" --symfs "$tmp/empty" --buildid-dir "$cache" "$cap" \
		> "$tmp/$name.out" 2> "$tmp/$name.err"
	echo $? > "$tmp/$name.rc"
}

# same_as TARBALL DIR LABEL: every variant, the tarball against its extraction
same_as() {
	local t=$1 x=$2 label=$3 v
	for v in "${variants[@]}"; do
		read -r -a words <<<"$v"
		run a "$t" "${words[@]}"
		run b "$x" "${words[@]}"
		sed -i "s#$x#$t#g" "$tmp/b.out" "$tmp/b.err"
		for k in out err rc; do
			cmp -s "$tmp/a.$k" "$tmp/b.$k" || {
				echo "FAIL $label, $v: $k differs from the extracted cache's"
				diff "$tmp/b.$k" "$tmp/a.$k" | head -5
				fail=1
			}
		done
		[ "$(cat "$tmp/a.rc")" = 0 ] || { echo "FAIL $label, $v: exit $(cat "$tmp/a.rc")"; cat "$tmp/a.err"; fail=1; }
	done
}

for l in new old; do
	mkdir -p "$tmp/x-$l"
	tar -xjf "$tmp/$l.tar.bz2" -C "$tmp/x-$l" || { echo "FAIL: GNU tar cannot extract $l"; fail=1; }
	same_as "$tmp/$l.tar.bz2" "$tmp/x-$l" "$l layout"
	run a "$tmp/$l.tar.bz2" fold
	# (libc's local functions are in its debug file: the new layout only)
	wants=('main;do_io' 'entry_SYSCALL_64')
	[ $l = new ] && wants+=('__libc_start_call_main')
	for want in "${wants[@]}"; do
		grep -q "$want" "$tmp/a.out" || { echo "FAIL $l layout: no $want"; fail=1; }
	done
done
# ld's entry holds only its debug file: its symbols cannot be placed
# without the binary (debugonly.sh), so its frames stay unnamed
run a "$tmp/new.tar.bz2" fold
grep -q '\[ld-linux-x86-64.so.2\]' "$tmp/a.out" || { echo "FAIL: ld's debug-only entry named frames"; fail=1; }
# without the tarball, none of those names
run b "$tmp/empty" fold
grep -q 'main;do_io\|entry_SYSCALL_64' "$tmp/b.out" && { echo "FAIL: names without the tarball"; fail=1; }

# the cache packed with tar -h (links followed): .build-id/xx/<rest>/elf
# is a file of its own, read as its link would be
tar -chjf "$tmp/deref.tar.bz2" -C "$tmp/x-new" . || { echo "FAIL: tar -chjf"; fail=1; }
tar -tvjf "$tmp/deref.tar.bz2" > "$tmp/deref.list"
grep -q "^[-h].* \./\.build-id/${b_exe:0:2}/${b_exe:2}/elf" "$tmp/deref.list" ||
	{ echo "FAIL: tar -h did not follow the link"; fail=1; }
same_as "$tmp/deref.tar.bz2" "$tmp/x-new" "tar -h"

# perf archive --all: perf.data and perf.symbols.tar.bz2 in an outer tarball
cp "$tmp/new.tar.bz2" "$tmp/perf.symbols.tar.bz2"
(cd "$tmp" && cp "$cap" perf.data && tar -cjf all.tar.bz2 perf.data perf.symbols.tar.bz2) ||
	{ echo "FAIL: making the --all tarball"; fail=1; }
same_as "$tmp/all.tar.bz2" "$tmp/x-new" "--all"

# kfold archive with the tarball: the bundle, read without it, says the same
"$kfold" archive -q --symfs "$tmp/empty" --buildid-dir "$tmp/new.tar.bz2" -o "$tmp/b.tar.zst" "$cap" \
	2> "$tmp/arch.err" || { echo "FAIL: kfold archive: $(cat "$tmp/arch.err")"; fail=1; }
mv "$tmp/new.tar.bz2" "$tmp/moved.tar.bz2"
for v in "${variants[@]}"; do
	read -r -a words <<<"$v"
	run a "$tmp/moved.tar.bz2" "${words[@]}"
	sed -i "s#$tmp/moved.tar.bz2#$tmp/new.tar.bz2#g" "$tmp/a.out" "$tmp/a.err"
	"$kfold" "${words[@]}" "$tmp/b.tar.zst" > "$tmp/c.out" 2> "$tmp/c.err"
	echo $? > "$tmp/c.rc"
	for k in out err rc; do
		cmp -s "$tmp/a.$k" "$tmp/c.$k" || {
			echo "FAIL bundle, $v: $k differs from the tarball run's"
			diff "$tmp/a.$k" "$tmp/c.$k" | head -5
			fail=1
		}
	done
done
mv "$tmp/moved.tar.bz2" "$tmp/new.tar.bz2"

# hostile: links to outside, no file of their own
mk "$tmp/out.tar.bz2" \
	"raw:symlink:.build-id/${b_exe:0:2}/${b_exe:2}:$symfs/$exe" \
	"raw:symlink:.build-id/${b_libc:0:2}/${b_libc:2}:../../../../../../../../$symfs/$libc" \
	"raw:symlink:$kern/$b_kern/kallsyms:$KF_KALLSYMS"
mkdir -p "$tmp/x-out"
tar -xjf "$tmp/out.tar.bz2" -C "$tmp/x-out" 2>/dev/null
same_as "$tmp/out.tar.bz2" "$tmp/x-out" "links outside"
run a "$tmp/out.tar.bz2" fold
grep -q 'main;do_io\|entry_SYSCALL_64\|__libc_start_call_main' "$tmp/a.out" &&
	{ echo "FAIL: a link to outside was followed"; fail=1; }

# hostile: an elf that is not its directory's build-id (libc as the
# program), a member named with "..": dropped
mk "$tmp/wrong.tar.bz2" \
	"$exe:$b_exe:elf:$symfs/$libc" \
	"raw:file:../../$libc/$b_libc/elf:$symfs/$libc"
run a "$tmp/wrong.tar.bz2" fold
[ "$(cat "$tmp/a.rc")" = 0 ] || { echo "FAIL wrong build-id: exit $(cat "$tmp/a.rc")"; fail=1; }
grep -q "$exe/$b_exe/elf (offset [0-9]*) has build-id $b_libc, not its directory's $b_exe: not used" "$tmp/a.err" ||
	{ echo "FAIL wrong build-id: no warning"; cat "$tmp/a.err"; fail=1; }
grep -q 'main;do_io\|__libc_start_call_main' "$tmp/a.out" &&
	{ echo "FAIL wrong build-id: its names used"; fail=1; }

# refused: exit 2 naming the member and what it is
refused() {
	local label=$1 want=$2
	shift 2
	mk "$tmp/bad.tar.bz2" "$exe:$b_exe:elf:$symfs/$exe" "$@"
	run a "$tmp/bad.tar.bz2" fold
	[ "$(cat "$tmp/a.rc")" = 2 ] || { echo "FAIL $label: exit $(cat "$tmp/a.rc"), not 2"; fail=1; }
	grep -q -- "$want" "$tmp/a.err" || { echo "FAIL $label: no \"$want\""; cat "$tmp/a.err"; fail=1; }
	[ -s "$tmp/a.out" ] && { echo "FAIL $label: output written"; fail=1; }
}
refused "FIFO" "member $exe/$b_exe/fifo at offset [0-9]* is a FIFO" "raw:fifo:$exe/$b_exe/fifo:"
refused "device" "member dev/null at offset [0-9]* is a character device" "raw:chr:dev/null:"
refused "sparse" "member $exe/$b_exe/x at offset [0-9]* is a member of an unknown type (type 'S')" \
	"raw:sparse:$exe/$b_exe/x:"
# hard links: to an earlier member of the same build-id, its content (the
# program named from the link alone); to anything else, dropped
mk "$tmp/hl.tar.bz2" "raw:file:x/$b_exe/elf:$symfs/$exe" "raw:hardlink:$exe/$b_exe/elf:x/$b_exe/elf" \
	"raw:hardlink:$libc/$b_libc/elf:x/$b_exe/elf" "raw:hardlink:$ld/$b_ld/elf:/etc/passwd"
run a "$tmp/hl.tar.bz2" fold
[ "$(cat "$tmp/a.rc")" = 0 ] || { echo "FAIL hard links: exit $(cat "$tmp/a.rc")"; cat "$tmp/a.err"; fail=1; }
grep -q 'main;do_io' "$tmp/a.out" || { echo "FAIL hard links: the program not named"; fail=1; }
grep -q "$libc/$b_libc/elf (offset [0-9]*) is a hard link to x/$b_exe/elf, whose build-id $b_exe is not its directory's $b_libc: not used" "$tmp/a.err" ||
	{ echo "FAIL hard link to another build-id: no warning"; cat "$tmp/a.err"; fail=1; }
grep -q "$ld/$b_ld/elf (offset [0-9]*) is a hard link to /etc/passwd, which is no file kfold took before it: not used" "$tmp/a.err" ||
	{ echo "FAIL hard link outside: no warning"; cat "$tmp/a.err"; fail=1; }

# damaged: a truncated .bz2, a flipped byte, a file that is no tarball
size=$(stat -c %s "$tmp/new.tar.bz2")
head -c $((size / 2)) "$tmp/new.tar.bz2" > "$tmp/cut.tar.bz2"
python3 -c "
import sys; d = bytearray(open(sys.argv[1], 'rb').read()); d[len(d) // 3] ^= 0x55
open(sys.argv[2], 'wb').write(d)" "$tmp/new.tar.bz2" "$tmp/flip.tar.bz2"
for c in "cut:offset [0-9]*" "flip:offset [0-9]*" "notar:perf archive tarball"; do
	f=$tmp/${c%%:*}.tar.bz2
	[ "${c%%:*}" = notar ] && f=$cap
	run a "$f" fold
	[ "$(cat "$tmp/a.rc")" = 2 ] || { echo "FAIL ${c%%:*}: exit $(cat "$tmp/a.rc"), not 2"; fail=1; }
	grep -q -- "${c#*:}" "$tmp/a.err" || { echo "FAIL ${c%%:*}: no \"${c#*:}\""; cat "$tmp/a.err"; fail=1; }
	echo "${c%%:*}: $(head -1 "$tmp/a.err")"
done

[ $fail = 0 ] && echo "perfarchive: ok"
exit $fail
