#!/usr/bin/env bash
# inline.sh TEST-INLINE SRCDIR KFOLD: kfold's inline chains and source lines
# (src/symbols/inline.c) against addr2line, at every instruction of the inline test
# program (testdata/src/inline/inl.c) built three ways:
#   inl-gcc-O2    binutils `addr2line -a -f -i`
#   inl-gcc-O0    the same (the control: nothing inlined)
#   inl-clang-O2  `llvm-addr2line -a -f -i`: binutils 2.40 drops the inner
#                 inline levels of clang 14's DWARF 5 (at 0x1184 it gives
#                 accumulate;compute_stats where the DIEs, llvm-dwarfdump
#                 --lookup and llvm-addr2line give rotl;mix;accumulate;
#                 compute_stats)
# Left out: padding between functions (nop instructions outside every
# DWARF function: no sample lands there, and addr2line names it from the
# symbol table with the line table's last row), and code without DWARF
# (the C runtime's _start...), which addr2line names from the symbol table
# without a source line.
set -uo pipefail
probe=$1
src=$2
kfold=$3
bin=$src/testdata/symfs/tmp/kfold-fx/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

for tool in objdump addr2line python3; do
	command -v "$tool" >/dev/null || { echo "SKIP: $tool not found"; exit 77; }
done
llvm=$(command -v llvm-addr2line-14 || command -v llvm-addr2line || true)

check_binary() {   # check_binary NAME ORACLE...
	local name=$1 f=$bin/$1
	shift
	# instruction starts in .text, with their mnemonic
	objdump -d --no-show-raw-insn -j .text "$f" |
		sed -n 's/^ *\([0-9a-f][0-9a-f]*\):[[:space:]]*\([a-z0-9]*\).*/\1 \2/p' > "$tmp/$name.insns"
	cut -d' ' -f1 "$tmp/$name.insns" > "$tmp/$name.addrs"
	sed 's/^/0x/' "$tmp/$name.addrs" | "$@" -a -f -i -e "$f" > "$tmp/$name.oracle"
	"$probe" "$f" < "$tmp/$name.addrs" > "$tmp/$name.kfold"
	python3 - "$tmp/$name.oracle" "$tmp/$name.kfold" "$tmp/$name.insns" "$name" <<'PY'
import re, sys
def blocks(path):
    out, cur, lines = [], None, open(path).read().split("\n")
    i = 0
    while i < len(lines):
        l = lines[i]
        if re.match(r"^0x[0-9a-f]+$", l):
            cur = [int(l, 16), []]
            out.append(cur)
            i += 1
        elif l == "":
            i += 1
        else:
            loc = re.sub(r" \(discriminator \d+\)$", "", lines[i + 1])
            cur[1].append((l, re.sub(r":\?$", ":0", loc)))
            i += 2
    return out
oracle, kfold = blocks(sys.argv[1]), blocks(sys.argv[2])
nops = {int(l.split()[0], 16) for l in open(sys.argv[3])
        if len(l.split()) > 1 and l.split()[1].startswith(("nop", "xchg", "cs", "data16", "int3"))}
name = sys.argv[4]
# the C runtime's code in every program, built without debug info
CRT = {"_start", "deregister_tm_clones", "register_tm_clones",
       "__do_global_dtors_aux", "frame_dummy", "_init", "_fini"}
if len(oracle) != len(kfold) or not kfold:
    print("FAIL %s: %d addresses from the oracle, %d from kfold" % (name, len(oracle), len(kfold)))
    sys.exit(1)
bad = padding = inlined = 0
for (a, o), (a2, k) in zip(oracle, kfold):
    assert a == a2
    if k == [("??", "??:0")] and (a in nops or (len(o) == 1 and o[0][0] in CRT and o[0][1].endswith(":0"))):
        # padding, or code without DWARF (the CRT's _start...) that the
        # oracle names from the symbol table, without a line
        padding += 1
        continue
    if k != o:
        bad += 1
        if bad <= 5:
            print("  at 0x%x: oracle %s, kfold %s" % (a, o, k))
    elif len(k) > 1:
        inlined += 1
print("%s %s: %d instructions, %d differ, %d with inlined frames, %d without DWARF left out"
      % ("ok  " if bad == 0 else "FAIL", name, len(kfold), bad, inlined, padding))
sys.exit(1 if bad else 0)
PY
	[ $? -eq 0 ] || fail=1
}

check_binary inl-gcc-O2 addr2line
check_binary inl-gcc-O0 addr2line
if [ -n "$llvm" ]; then
	check_binary inl-clang-O2 "$llvm"
else
	echo "FAIL: llvm-addr2line not found (scripts/setup.sh installs llvm-14)"
	fail=1
fi

. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1

# dwz: inl-dwz's debug file refers (.gnu_debugaltlink) to a supplementary
# file under /usr/lib/debug/.dwz, as Debian's -dbgsym packages do.  With
# it, kfold expands exactly as from the debug file before dwz
# (testdata/dwz/inl-dwz.plain.debug); without it, names are missing and a
# warning says which file to get.
dwz_case=$src/testdata/cases/inline-dwz/perf.data
dwz_dbg=usr/lib/debug/.build-id/94/18f547680ac860b248539b5bd5d327d68b4c3f.debug
kf=("$kfold" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE")
mkdir -p "$tmp/plain" "$tmp/nodwz"
cp -r "$src/testdata/symfs/." "$tmp/plain/"
cp -r "$src/testdata/symfs/." "$tmp/nodwz/"
cp "$src/testdata/dwz/inl-dwz.plain.debug" "$tmp/plain/$dwz_dbg"
rm "$tmp/nodwz/usr/lib/debug/.dwz/kfold-inl.debug"
"${kf[@]}" -q --symfs "$src/testdata/symfs" "$dwz_case" > "$tmp/dwz.split"
"${kf[@]}" -q --symfs "$tmp/plain" "$dwz_case" > "$tmp/dwz.plain"
"${kf[@]}" --symfs "$tmp/nodwz" "$dwz_case" > "$tmp/dwz.none" 2> "$tmp/dwz.err"
if cmp -s "$tmp/dwz.split" "$tmp/dwz.plain" &&
	grep -q ';run;compute_stats;accumulate;mix;rotl ' "$tmp/dwz.split"; then
	echo "ok   dwz: the split debug info expands as the original"
else
	echo "FAIL: dwz: split and original debug info expand differently:"
	diff "$tmp/dwz.plain" "$tmp/dwz.split" | head -10
	fail=1
fi
if ! cmp -s "$tmp/dwz.split" "$tmp/dwz.none" &&
	grep -q 'refers to a dwz file, /usr/lib/debug/.dwz/kfold-inl.debug (build-id [0-9a-f]*), not found' "$tmp/dwz.err"; then
	echo "ok   dwz: without the supplementary file, a warning names it"
else
	echo "FAIL: dwz: no sign of the missing supplementary file:"
	cat "$tmp/dwz.err"
	fail=1
fi

# --debug-dir: the same debug file and supplementary file, by build-id
# under another directory (inside the symfs)
mkdir -p "$tmp/ddir"
cp -r "$src/testdata/symfs/." "$tmp/ddir/"
mkdir -p "$tmp/ddir/opt/dbg/.build-id/94" "$tmp/ddir/opt/dbg/.build-id/fc"
mv "$tmp/ddir/$dwz_dbg" "$tmp/ddir/opt/dbg/.build-id/94/"
mv "$tmp/ddir/usr/lib/debug/.dwz/kfold-inl.debug" \
	"$tmp/ddir/opt/dbg/.build-id/fc/e6db0226dc09a1713f0e7cb02b1638aa4f4e87.debug"
"${kf[@]}" -q --symfs "$tmp/ddir" --debug-dir /opt/dbg "$dwz_case" > "$tmp/dwz.ddir"
"${kf[@]}" -q --symfs "$tmp/ddir" "$dwz_case" > "$tmp/dwz.noddir"
if cmp -s "$tmp/dwz.split" "$tmp/dwz.ddir" && ! cmp -s "$tmp/dwz.split" "$tmp/dwz.noddir"; then
	echo "ok   --debug-dir: debug and supplementary files found there by build-id"
else
	echo "FAIL: --debug-dir did not give the same expansion"
	fail=1
fi

# A stripped binary whose DWARF is only behind its .gnu_debuglink, and one
# whose binary and debug file are only in a perf build-id cache ("elf" and
# "debug" entries): both expand exactly as the unstripped binary.
inl_case=$src/testdata/cases/inline-dwarf/perf.data
inl_rel=tmp/kfold-fx/bin/inl-gcc-O2
inl_bid=$(readelf -n "$src/testdata/symfs/$inl_rel" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p')
"${kf[@]}" -q --symfs "$src/testdata/symfs" "$inl_case" > "$tmp/inl.full"
mkdir -p "$tmp/dl" "$tmp/cache"
cp -r "$src/testdata/symfs/." "$tmp/dl/"
objcopy --only-keep-debug "$src/testdata/symfs/$inl_rel" "$tmp/inl.debug"
objcopy --strip-all "$src/testdata/symfs/$inl_rel" "$tmp/inl.stripped"
mkdir -p "$tmp/dl/tmp/kfold-fx/bin/.debug"
cp "$tmp/inl.debug" "$tmp/dl/tmp/kfold-fx/bin/.debug/inl-gcc-O2.debug"
(cd "$tmp" && objcopy --add-gnu-debuglink=inl.debug inl.stripped "$tmp/dl/$inl_rel.tmp")
# the link names inl.debug: rename the file to what the link says
mv "$tmp/dl/tmp/kfold-fx/bin/.debug/inl-gcc-O2.debug" "$tmp/dl/tmp/kfold-fx/bin/.debug/inl.debug"
mv "$tmp/dl/$inl_rel.tmp" "$tmp/dl/$inl_rel"
"${kf[@]}" -q --symfs "$tmp/dl" "$inl_case" > "$tmp/inl.dl"
cp "$tmp/inl.stripped" "$tmp/dl/$inl_rel"
"${kf[@]}" -q --symfs "$tmp/dl" "$inl_case" > "$tmp/inl.nodl"
if [ -n "$inl_bid" ] && cmp -s "$tmp/inl.full" "$tmp/inl.dl" &&
	grep -q ';run;compute_stats;accumulate;mix;rotl ' "$tmp/inl.dl" &&
	! grep -q ';compute_stats;accumulate' "$tmp/inl.nodl"; then
	echo "ok   .gnu_debuglink: a stripped binary's debug file in .debug/ gives the full expansion"
else
	echo "FAIL: .gnu_debuglink: the stripped binary did not expand as the original (bid '$inl_bid')"
	diff "$tmp/inl.full" "$tmp/inl.dl" | head -10
	fail=1
fi
# a debug file with another build-id behind the link (another build of
# the program) is refused, by name, and nothing of it is used
objcopy --only-keep-debug "$src/testdata/symfs/tmp/kfold-fx/bin/inl-gcc-O0" \
	"$tmp/dl/tmp/kfold-fx/bin/.debug/inl.debug"
(cd "$tmp" && objcopy --add-gnu-debuglink=inl.debug inl.stripped "$tmp/dl/$inl_rel.tmp")
mv "$tmp/dl/$inl_rel.tmp" "$tmp/dl/$inl_rel"
"${kf[@]}" --symfs "$tmp/dl" "$inl_case" > "$tmp/inl.wrongdl" 2> "$tmp/inl.wrongdl.err"
if cmp -s "$tmp/inl.nodl" "$tmp/inl.wrongdl" &&
	grep -q "warning: /$inl_rel: .*/tmp/kfold-fx/bin/.debug/inl.debug has build-id [0-9a-f]*, not the recorded $inl_bid: not used" "$tmp/inl.wrongdl.err"; then
	echo "ok   .gnu_debuglink: a debug file of another build is refused and named"
else
	echo "FAIL: .gnu_debuglink: a debug file with another build-id:"
	cat "$tmp/inl.wrongdl.err"
	diff "$tmp/inl.nodl" "$tmp/inl.wrongdl" | head -5
	fail=1
fi
# the build-id cache: .build-id/xx/rest -> ../../<path>/<bid>, holding
# "elf" (the stripped binary) and "debug"; the symfs has neither
mkdir -p "$tmp/cache/$inl_rel/$inl_bid" "$tmp/cache/.build-id/${inl_bid:0:2}" "$tmp/nobin"
cp -r "$src/testdata/symfs/." "$tmp/nobin/"
rm "$tmp/nobin/$inl_rel"
cp "$tmp/inl.stripped" "$tmp/cache/$inl_rel/$inl_bid/elf"
cp "$tmp/inl.debug" "$tmp/cache/$inl_rel/$inl_bid/debug"
ln -s "../../$inl_rel/$inl_bid" "$tmp/cache/.build-id/${inl_bid:0:2}/${inl_bid:2}"
"$kfold" -q --kallsyms "$KF_KALLSYMS" --symfs "$tmp/nobin" --buildid-dir "$tmp/cache" \
	"$inl_case" > "$tmp/inl.cache"
if cmp -s "$tmp/inl.full" "$tmp/inl.cache"; then
	echo "ok   build-id cache: stripped \"elf\" + \"debug\" entries give the full expansion"
else
	echo "FAIL: build-id cache debug entry:"
	diff "$tmp/inl.full" "$tmp/inl.cache" | head -10
	fail=1
fi

# --stats says where each module's debug info came from, or what to install
"$kfold" -q --stats --symfs "$src/testdata/symfs" --kallsyms "$KF_KALLSYMS" \
	--buildid-dir "$KF_NOCACHE" "$src/testdata/cases/inline-dwarf/perf.data" \
	> /dev/null 2> "$tmp/stats"
if grep -qx 'kfold:   debug info (inline frames, lines) from .*/testdata/symfs/tmp/kfold-fx/bin/inl-gcc-O2' "$tmp/stats" &&
	grep -q '^kfold:   no debug info: .* install the debug file for /usr/lib/x86_64-linux-gnu/libc.so.6, build-id 93ac61ec5a8eb1396f9fbd350e3169a558528a40 ' "$tmp/stats"; then
	echo "ok   --stats: where debug info came from, and what to install where there is none"
else
	echo "FAIL: --stats debug info lines:"
	cat "$tmp/stats"
	fail=1
fi
exit $fail
