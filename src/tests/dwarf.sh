#!/usr/bin/env bash
# dwarf.sh KFOLD SRCDIR: what the DWARF captures show beyond equality with
# perf (golden.sh checks that):
#  - the same no-frame-pointer program recorded with -g breaks its stacks,
#    recorded with --call-graph dwarf does not, and kfold says which
#    modules broke the frame-pointer chains;
#  - a stack copy too small for the recursion is reported, with the fix;
#  - 32-bit samples (which perf 6.1 does not unwind) follow the program's
#    call graph (testdata/src/dwarf/dw-i386.c);
#  - aarch64 samples (a capture written from qemu-user register and stack
#    dumps, which perf 6.1 on x86_64 does not unwind) give the stacks
#    checked by hand (testdata/cases/dwarf-aarch64/README), also when the
#    saved return addresses are signed with pointer authentication
#    (testdata/cases/dwarf-aarch64-pac/README).
set -uo pipefail
kfold=$1
src=$2
cases=$src/testdata/cases
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"
opts=("${KF_FLAGS[@]}")
fail=0

# share WEIGHT-OF-LINES-MATCHING-REGEX FILE: percent of the total weight
share() {
	awk -v re="$1" '{ w = $NF; t += w; if ($0 ~ re) m += w }
		END { if (t == 0) print 0; else printf "%d\n", 100 * m / t }' "$2"
}

check() {   # check NAME CONDITION-STATUS MESSAGE
	if [ "$2" -eq 0 ]; then echo "ok   $1"; else echo "FAIL $1: $3"; fail=1; fi
}

# 1. fp versus DWARF, same binary
"$kfold" -q "${opts[@]}" "$cases/dwarf-qsort/perf.data" > "$tmp/dw"
"$kfold" "${opts[@]}" --stats "$cases/dwarf-vs-fp/perf.data" > "$tmp/fp" 2> "$tmp/fp.err"
p=$(share '^dw-qsort;_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;main;' "$tmp/dw")
[ "$p" -ge 95 ]; check "DWARF stacks reach _start ($p%)" $? "only $p% of the weight"
p=$(share '^dw-qsort;(_start|__libc_start_call_main);' "$tmp/fp")
[ "$p" -le 5 ]; check "frame-pointer stacks of the same binary are broken ($p% complete)" $? "$p% complete"
grep -q 'stop before the program.s entry' "$tmp/fp.err"; check "fp breaks reported" $? "no report"
grep -A3 'stop before the program.s entry' "$tmp/fp.err" | grep -q '/tmp/kfold-fx/bin/dw-qsort$'
check "the program is named as lacking frame pointers" $? "$(cat "$tmp/fp.err")"
grep -A3 'stop before the program.s entry' "$tmp/fp.err" | grep -q 'libc.so.6$'
check "libc is named as lacking frame pointers" $? "$(cat "$tmp/fp.err")"

# 2. a stack copy too small: reason and hint
"$kfold" "${opts[@]}" --stats "$cases/dwarf-small/perf.data" > "$tmp/small" 2> "$tmp/small.err"
grep -q 'user stack copy exhausted in /tmp/kfold-fx/bin/dw-recursion: record with a larger stack copy: --call-graph dwarf,SIZE' "$tmp/small.err"
check "truncation reason and hint" $? "$(grep -i 'exhausted' "$tmp/small.err")"
p=$(share '^dw-recursion;\[truncated\];' "$tmp/small")
[ "$p" -ge 90 ]; check "truncated stacks marked [truncated] ($p%)" $? "$p%"

# 3. i386: the program's call graph (perf shows no user frame at all)
"$kfold" -q "${opts[@]}" "$cases/dwarf-i386/perf.data" > "$tmp/i386"
base='^dw-i386;_start;__libc_start_main@@GLIBC_2.34;__libc_start_call_main;main;run;'
p=$(share "$base" "$tmp/i386")
# about a quarter of the samples sit in libc's __memcpy_ia32, whose CFI
# misses its push %eax (the CFA stays esp+4 in the loop), so no unwinder
# gets past it from those pcs
[ "$p" -ge 65 ]; check "i386 stacks reach _start ($p%)" $? "$p%"
grep -qE "${base}descend(;descend){11};leaf_compute " "$tmp/i386"
check "i386: run;descend x 12;leaf_compute" $? "missing"
grep -qE "${base}sort_ints;qsort;__GI___qsort_r;msort_with_tmp.part.0(;msort_with_tmp.part.0)*;cmp_ints;int_key " "$tmp/i386"
check "i386: run;sort_ints;qsort;...;cmp_ints;int_key" $? "missing"

# 4. aarch64: the register mapping (perf's x0..x30, sp, pc), frameless
#    leaves (return address still in lr), a stale lr in a function that
#    saved it, a 5-deep recursion, and _start's undefined lr
# hand_checked LABEL CASE PROGRAM: kfold's stacks equal the hand-checked
# ones, and all 12 unwinds reach the outermost frame in PROGRAM
hand_checked() {
	local out=$tmp/$2
	"$kfold" "${opts[@]}" --stats "$cases/$2/perf.data" > "$out" 2> "$out.err"
	check "$1: kfold exit status" $? "$(cat "$out.err")"
	diff -u "$cases/$2/expected.unwound.folded" "$out" > "$out.diff"
	check "$1: the stacks checked by hand" $? "$(head -20 "$out.diff")"
	grep -q '^kfold: user stacks unwound: 12 samples, 0 frames guessed' "$out.err" &&
		grep -qE "^kfold: +12 +reached the outermost frame in /tmp/kfold-fx/bin/$3\$" "$out.err"
	check "$1: all 12 unwinds reach the outermost frame (_start)" $? \
		"$(grep -A3 'user stacks unwound' "$out.err")"
}
hand_checked aarch64 dwarf-aarch64 dw-arm64

# 5. aarch64 with pointer authentication: the same program built with
#    -mbranch-protection=pac-ret and run on qemu's "max" cpu saves its
#    return addresses signed in bits 48-54 (paciasp); an unwinder that does
#    not strip the signature stops at the first one ("pc outside any
#    mapping": dw-arm64-pac;[unknown];inner;spin)
hand_checked "aarch64 pac-ret" dwarf-aarch64-pac dw-arm64-pac
# ... and the capture really holds signed return addresses (a recording on
# a cpu without PAC would pass the checks above without testing anything):
# per capture, samples, samples with a code address of the program with
# bits 48-63 set somewhere in their stack copy, and how many such words
# (the layout make-aarch64-capture.py writes)
python3 - "$cases/dwarf-aarch64-pac/perf.data" "$cases/dwarf-aarch64/perf.data" \
	> "$tmp/signed" 2>&1 <<'EOF'
import struct, sys
for path in sys.argv[1:]:
    b = open(path, "rb").read()
    do, dsz = struct.unpack_from("<QQ", b, 40)
    text, n, with_signed, words = None, 0, 0, 0
    p = do
    while p < do + dsz:
        t, m, s = struct.unpack_from("<IHH", b, p)
        if t == 10:                               # MMAP2: the program's text
            start, size = struct.unpack_from("<QQ", b, p + 16)
            if struct.unpack_from("<I", b, p + 64)[0] & 4:
                text = (start, start + size)
        elif t == 9:                              # SAMPLE: regs at +64, then the stack
            q = p + 64 + 8 * 33
            size, = struct.unpack_from("<Q", b, q)
            dyn, = struct.unpack_from("<Q", b, q + 8 + size)
            k = 0
            for w, in struct.iter_unpack("<Q", b[q + 8:q + 8 + dyn - dyn % 8]):
                if w >> 48 and text[0] <= w & (1 << 48) - 1 < text[1]:
                    k += 1
            n += 1
            with_signed += k > 0
            words += k
        p += s
    print(n, with_signed, words)
EOF
read -r n1 s1 w1 n2 s2 w2 <<< "$(tr '\n' ' ' < "$tmp/signed")"
[ "${n1:-0}" = 12 ] && [ "$s1" = 12 ]
check "aarch64 pac-ret: every sample's stack holds signed return addresses (${w1:-?} words)" $? \
	"$(cat "$tmp/signed")"
[ "${n2:-0}" = 12 ] && [ "$w2" = 0 ]
check "aarch64: the unsigned capture holds none" $? "$(cat "$tmp/signed")"

# 6. code without CFI, frame pointers only (dw-nocfi): the whole call graph
#    main -> run -> outer -> middle -> inner_loop, outer -> side, with the
#    frames found without CFI counted as guessed; perf's libunwind skips a
#    sampled leaf's caller (its expected.folded has outer;inner_loop)
"$kfold" "${opts[@]}" --stats "$cases/dwarf-nocfi/perf.data" > "$tmp/nocfi" 2> "$tmp/nocfi.err"
cg='^dw-nocfi;_start;__libc_start_main@@GLIBC_2\.34;__libc_start_call_main;main;run;outer;(middle;inner_loop|middle|side) '
p=$(share "$cg" "$tmp/nocfi")
[ "$p" -ge 99 ]; check "no CFI: stacks follow the call graph ($p%)" $? "$(cat "$tmp/nocfi")"
! grep ';main;' "$tmp/nocfi" | grep -qvE "$cg"
check "no CFI: no stack through main strays from the call graph" $? "$(grep ';main;' "$tmp/nocfi" | grep -vE "$cg")"
g=$(sed -n 's/.* samples, \([0-9]*\) frames guessed.*/\1/p' "$tmp/nocfi.err")
[ "${g:-0}" -gt 0 ]; check "no CFI: frames found without CFI counted as guessed (${g:-none})" $? "$(cat "$tmp/nocfi.err")"
# its one sample in ld.so's start-up: _start, the entry point, has no CFI
# in glibc and is the outermost frame, not a missing-CFI stop
grep -qE '^kfold: +1 +reached the outermost frame in /usr/lib/x86_64-linux-gnu/ld-linux-x86-64\.so\.2$' "$tmp/nocfi.err"
check "ld.so's entry point (_start, no CFI) is the outermost frame" $? "$(grep ld-linux "$tmp/nocfi.err")"
grep -q ';outer;inner_loop ' "$cases/dwarf-nocfi/expected.folded" &&
	! grep -q ';middle;inner_loop ' "$cases/dwarf-nocfi/expected.folded"
check "no CFI: perf's oracle skips middle (why kfold differs)" $? "$(cat "$cases/dwarf-nocfi/expected.folded")"

# 7. CFI only in the debug file's .debug_frame (dw-dbgframe): the call
#    graph with nothing guessed; without the debug file, no CFI
"$kfold" "${opts[@]}" --stats "$cases/dwarf-dbgframe/perf.data" > "$tmp/dbgf" 2> "$tmp/dbgf.err"
cg='^dw-dbgframe;_start;__libc_start_main@@GLIBC_2\.34;__libc_start_call_main;main;run;outer;(middle;inner_loop|middle|side) '
p=$(share "$cg" "$tmp/dbgf")
[ "$p" -ge 99 ]; check ".debug_frame: stacks follow the call graph ($p%)" $? "$(cat "$tmp/dbgf")"
grep -q ' 0 frames guessed' "$tmp/dbgf.err"; check ".debug_frame: nothing guessed" $? "$(cat "$tmp/dbgf.err")"
mkdir -p "$tmp/symfs2"
cp -r "$src/testdata/symfs/." "$tmp/symfs2/"
bid=$(ls "$src/testdata/symfs/usr/lib/debug/.build-id/c9/")
rm "$tmp/symfs2/usr/lib/debug/.build-id/c9/$bid"
"$kfold" --symfs "$tmp/symfs2" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" --stats \
	"$cases/dwarf-dbgframe/perf.data" > "$tmp/dbgf2" 2> "$tmp/dbgf2.err"
p=$(share ';main;' "$tmp/dbgf2")
[ "$p" -le 1 ] && grep -q 'no unwind information (CFI) in /tmp/kfold-fx/bin/dw-dbgframe' "$tmp/dbgf2.err"
check ".debug_frame: without the debug file the unwinds end for lack of CFI" $? "$(cat "$tmp/dbgf2.err")"

# 8. JIT code (anonymous, described by a perf map) without CFI but with
#    frame pointers: followed as code without CFI is, to the call graph of
#    testdata/src/jit.c; perf stops at the first JIT frame
"$kfold" "${opts[@]}" --stats --perf-map-dir "$cases/dwarf-jit" "$cases/dwarf-jit/perf.data" \
	> "$tmp/jit" 2> "$tmp/jit.err"
cg='^jit;_start;__libc_start_main@@GLIBC_2\.34;__libc_start_call_main;main;(run_jit;LazyCompile:\*driver app\.js:1|run_direct);(jit_hot_loop|\[perf-[0-9]+\.map\])( |;)'
p=$(share "$cg" "$tmp/jit")
[ "$p" -ge 98 ]; check "JIT: stacks through the jitted code follow the call graph ($p%)" $? "$(cat "$tmp/jit")"
grep -q 'run_jit;LazyCompile:\*driver app\.js:1;jit_hot_loop ' "$tmp/jit" &&
	grep -q ';run_direct;jit_hot_loop ' "$tmp/jit"
check "JIT: both paths into the hot loop" $? "$(cat "$tmp/jit")"
g=$(sed -n 's/.* samples, \([0-9]*\) frames guessed.*/\1/p' "$tmp/jit.err")
[ "${g:-0}" -gt 0 ]; check "JIT: frames found without CFI counted as guessed (${g:-none})" $? "$(cat "$tmp/jit.err")"
"$kfold" "${opts[@]}" --stats --compat=perf --perf-map-dir "$cases/dwarf-jit" "$cases/dwarf-jit/perf.data" \
	> /dev/null 2> "$tmp/jitc.err"
grep -qE '^kfold: +[0-9]+ +JIT or anonymous code in ' "$tmp/jitc.err"
check "JIT: --compat=perf stops there, as perf, and says why" $? "$(cat "$tmp/jitc.err")"

# 9. deeper than perf's 127 frames: the depth limit is the reason
"$kfold" "${opts[@]}" --stats "$cases/dwarf-deep/perf.data" > "$tmp/deep" 2> "$tmp/deep.err"
grep -qE '^kfold: +98 +depth limit: the stack is deeper than 127 frames$' "$tmp/deep.err" &&
	[ "$(awk '/^dw-deep;plunge;/ { print split($1, f, ";") - 1 }' "$tmp/deep" | sort -u)" = 127 ]
check "depth limit: 98 stacks of 127 frames, and why" $? "$(grep -A4 unwound "$tmp/deep.err")"

# 10. files missing or not the recorded ones: the unwind stops, says so
mkdir -p "$tmp/emptyfs" "$tmp/wrongfs/tmp/kfold-fx/bin"
cp "$src/testdata/symfs/tmp/kfold-fx/bin/dw-recursion" "$tmp/wrongfs/tmp/kfold-fx/bin/dw-qsort"
"$kfold" --symfs "$tmp/emptyfs" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" --stats \
	"$cases/dwarf-qsort/perf.data" > /dev/null 2> "$tmp/missing.err"
grep -qE '^kfold: +[0-9]+ +module file missing in /tmp/kfold-fx/bin/dw-qsort: ' "$tmp/missing.err"
check "a missing file is the reason the unwind stopped" $? "$(grep -A5 unwound "$tmp/missing.err")"
"$kfold" -q --symfs "$tmp/wrongfs" --kallsyms "$KF_KALLSYMS" --buildid-dir "$KF_NOCACHE" --stats \
	"$cases/dwarf-qsort/perf.data" > "$tmp/wrong" 2> "$tmp/wrong.err"
grep -qE '^kfold: +[0-9]+ +build-id mismatch in /tmp/kfold-fx/bin/dw-qsort: ' "$tmp/wrong.err" &&
	! grep -q 'record_key\|cmp_records\|descend' "$tmp/wrong"
check "a file with another build-id stops the unwind and names nothing" $? "$(grep -A5 unwound "$tmp/wrong.err")"
exit $fail
