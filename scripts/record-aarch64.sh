#!/usr/bin/env bash
# Re-record testdata/cases/dwarf-aarch64 or dwarf-aarch64-pac: aarch64
# --call-graph dwarf captures made without an arm64 machine and without perf.
#
# usage: scripts/record-aarch64.sh              build, run, write dwarf-aarch64
#        scripts/record-aarch64.sh --pac        the same program built with
#            -mbranch-protection=pac-ret (return addresses signed with pointer
#            authentication, as Ubuntu and Fedora build arm64 code) as
#            /tmp/kfold-fx/bin/dw-arm64-pac, run on qemu's "max" cpu (which
#            implements PAC and signs them), written to
#            testdata/cases/dwarf-aarch64-pac
#        scripts/record-aarch64.sh --symfs-only rebuild both binaries and put
#                                               them back into testdata/symfs
#
# Run it from anywhere; it works in the repository root.  Needs (only to
# record, not to run the tests):
#   apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user
# and python3; perf (6.1) is used, if installed, to check that it reads the
# new file.
#
# What it does:
#  1. builds testdata/src/aarch64/dw-arm64.c with the cross compiler into
#     /tmp/kfold-fx/bin/dw-arm64 (the path the capture records), statically:
#       aarch64-linux-gnu-gcc -std=gnu11 -O1 -g -static -fomit-frame-pointer
#           -fasynchronous-unwind-tables -fdebug-prefix-map=ROOT=.
#     and with --pac, also -mbranch-protection=pac-ret, into
#     /tmp/kfold-fx/bin/dw-arm64-pac (only the program's functions sign their
#     return addresses: Debian's libc6-dev-arm64-cross libc.a is not built
#     with branch protection, so the libc frames above main do not).
#     (-fdebug-prefix-map keeps the checkout's path out of the DWARF, so the
#     build-id does not depend on where the repository is; it still depends
#     on the cross gcc and libc6-dev-arm64-cross versions: 12.2.0-14cross1 and
#     2.36-8cross1 were used, with qemu-user 7.2);
#  2. runs it under qemu-aarch64 (uname -r set to 6.1.0-kfold-qemu-user, so
#     the capture does not carry the recording machine's kernel release;
#     with --pac, -cpu max, which implements PAC: qemu-user 7.2's default
#     cpu is "max" too, but a cpu without PAC (e.g. -cpu cortex-a57) runs
#     paciasp and autiasp as NOPs and nothing gets signed);
#     the program samples itself with SIGPROF and writes register and stack
#     dumps (see the top of dw-arm64.c).  A run in which phase B got no tick
#     in one of its two functions exits with 4 and is retried;
#  3. scripts/make-aarch64-capture.py turns the dump into
#     testdata/cases/dwarf-aarch64[-pac]/perf.data;
#  4. copies the binary to testdata/symfs/tmp/kfold-fx/bin/;
#  5. prints, per sample, pc, lr and sp with aarch64-linux-gnu-addr2line's
#     names, and what perf and kfold make of the file; with --pac also the
#     signed code addresses in each stack copy, and fails when a sample has
#     none (qemu did not sign: the capture would test nothing).  The PAC keys
#     are random per process, so every recording has other signatures.
# expected.unwound.folded and the case README are NOT rewritten: the stacks must be
# checked by hand against the program's call graph (the case READMEs say
# how), then expected.unwound.folded updated; expected.folded is perf's output (scripts/oracle.sh CASE).
#
# scripts/record-fixtures.sh rebuilds testdata/symfs from scratch, which
# removes dw-arm64 and dw-arm64-pac: run this script with --symfs-only
# afterwards (it checks that the rebuilt binaries have the build-ids the
# captures recorded).
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$script_dir")
cd "$root"
src=testdata/src/aarch64/dw-arm64.c
FX=/tmp/kfold-fx
BIN=$FX/bin
CC=aarch64-linux-gnu-gcc
CFLAGS_BASE=(-std=gnu11 -O1 -g -static -fomit-frame-pointer -fasynchronous-unwind-tables
	"-fdebug-prefix-map=$root=." -Wall -Wextra -Werror)
QEMU_BASE=(qemu-aarch64 -r 6.1.0-kfold-qemu-user)

log() { printf '== %s\n' "$*" >&2; }
die() { printf 'record-aarch64.sh: %s\n' "$*" >&2; exit 1; }

# variant plain|pac: set case_dir, prog, symfs_copy, CFLAGS, QEMU
variant() {
	CFLAGS=("${CFLAGS_BASE[@]}")
	QEMU=("${QEMU_BASE[@]}")
	case $1 in
	plain)
		case_dir=testdata/cases/dwarf-aarch64
		prog=$BIN/dw-arm64
		;;
	pac)
		case_dir=testdata/cases/dwarf-aarch64-pac
		prog=$BIN/dw-arm64-pac
		CFLAGS+=(-mbranch-protection=pac-ret)
		QEMU+=(-cpu max)
		;;
	esac
	symfs_copy=testdata/symfs$prog
}

symfs_only=
which=plain
case ${1-} in
"") ;;
--symfs-only) symfs_only=1 ;;
--pac) which=pac ;;
*) die "usage: scripts/record-aarch64.sh [--pac | --symfs-only]" ;;
esac
[ $# -le 1 ] || die "usage: scripts/record-aarch64.sh [--pac | --symfs-only]"

for tool in "$CC" qemu-aarch64 aarch64-linux-gnu-addr2line aarch64-linux-gnu-readelf python3; do
	command -v "$tool" >/dev/null ||
		die "$tool not found (apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)"
done

build_id() {
	aarch64-linux-gnu-readelf -n "$1" | sed -n 's/^ *Build ID: *\([0-9a-f]*\)$/\1/p' | head -n1
}

# recorded_build_id PERF.DATA: the id of the BUILD_ID feature's first entry
recorded_build_id() {
	python3 - "$1" <<'PY'
import struct, sys
b = open(sys.argv[1], "rb").read()
do, dsz = struct.unpack_from("<QQ", b, 40)
bits, = struct.unpack_from("<Q", b, 72)
if not bits >> 2 & 1:
    sys.exit("no BUILD_ID feature")
table = do + dsz + 16 * bin(bits & 3).count("1")    # BUILD_ID is bit 2
off, size = struct.unpack_from("<QQ", b, table)
misc, = struct.unpack_from("<H", b, off + 4)
n = b[off + 32] if misc & 0x8000 else 20
print(b[off + 12:off + 12 + n].hex())
PY
}

# build VARIANT: sets bid
build() {
	variant "$1"
	log "building $prog"
	mkdir -p "$BIN"
	"$CC" "${CFLAGS[@]}" -o "$prog" "$src"
	bid=$(build_id "$prog")
}

if [ -n "$symfs_only" ]; then
	for v in plain pac; do
		build "$v"
		[ -f "$case_dir/perf.data" ] || die "no $case_dir/perf.data"
		rec_bid=$(recorded_build_id "$case_dir/perf.data")
		[ "$bid" = "$rec_bid" ] ||
			die "the rebuilt $prog (build-id $bid) is not the recorded one ($rec_bid): another cross gcc or libc? Re-record instead."
		mkdir -p "$(dirname "$symfs_copy")"
		cp "$prog" "$symfs_copy"
		log "restored $symfs_copy (build-id $bid)"
	done
	exit 0
fi

build "$which"
dump=$FX/$(basename "$prog").dump
ok=
for try in 1 2 3 4 5; do
	rc=0
	"${QEMU[@]}" "$prog" "$dump" || rc=$?
	if [ $rc = 0 ]; then
		ok=1
		break
	fi
	[ $rc = 4 ] || die "$(basename "$prog") exited with $rc"
	log "run $try: phase B missed mix or work_b, again"
done
[ -n "$ok" ] || die "phase B never got a tick in both mix and work_b"

capture=$FX/$(basename "$prog").perf.data
python3 scripts/make-aarch64-capture.py --elf "$prog" "$dump" "$capture"

# signed CAPTURE: per sample, the words of the stack copy that are code
# addresses of the program with bits 48-63 set (return addresses signed by
# paciasp); exits 1 when a sample has none
signed() {
	python3 - "$1" <<'EOF'
import struct, sys
b = open(sys.argv[1], "rb").read()
do, dsz = struct.unpack_from("<QQ", b, 40)
text, samples = None, []
p = do
while p < do + dsz:
    t, m, s = struct.unpack_from("<IHH", b, p)
    if t == 10:                                   # MMAP2
        start, size = struct.unpack_from("<QQ", b, p + 16)
        prot, = struct.unpack_from("<I", b, p + 64)
        if prot & 4:
            text = (start, start + size)
    elif t == 9:                                  # SAMPLE (the generator's layout)
        regs = struct.unpack_from("<33Q", b, p + 64)
        q = p + 64 + 8 * 33
        size, = struct.unpack_from("<Q", b, q)
        dyn, = struct.unpack_from("<Q", b, q + 8 + size)
        samples.append((regs, b[q + 8:q + 8 + dyn]))
    p += s
bad = 0
for n, (regs, stack) in enumerate(samples):
    sp = regs[31]
    hits = []
    for off in range(0, len(stack) - 7, 8):
        w, = struct.unpack_from("<Q", stack, off)
        if w >> 48 and text[0] <= w & (1 << 48) - 1 < text[1]:
            hits.append("[%x] %016x" % (sp + off, w))
    print("  sample %d (pc %x, sp %x): %d signed: %s" % (n, regs[32], sp, len(hits), ", ".join(hits)))
    bad += not hits
sys.exit(1 if bad else 0)
EOF
}
if [ "$which" = pac ]; then
	log "signed return addresses in the stack copies:"
	signed "$capture" >&2 ||
		die "a sample has no signed return address on its stack: qemu did not sign (no -cpu max?); $case_dir left as it was"
fi

mkdir -p "$case_dir" "$(dirname "$symfs_copy")"
cp "$capture" "$case_dir/perf.data"
cp "$prog" "$symfs_copy"
log "binary: $symfs_copy ($(stat -c %s "$prog") bytes, build-id $bid)"

# ---- what to check by hand
log "samples (pc, lr, sp; addr2line of pc and lr):"
python3 - "$case_dir/perf.data" <<'EOF' |
import struct, sys
b = open(sys.argv[1], "rb").read()
do, dsz = struct.unpack_from("<QQ", b, 40)
p = do
while p < do + dsz:
    t, m, s = struct.unpack_from("<IHH", b, p)
    if t == 9:
        regs = struct.unpack_from("<33Q", b, p + 8 + 48 + 8)
        print("%x %x %x" % (regs[32], regs[30], regs[31]))
    p += s
EOF
while read -r pc lr sp; do
	printf '  pc %s %-10s lr %s %-10s sp %s\n' "$pc" \
		"$(aarch64-linux-gnu-addr2line -f -e "$prog" "$pc" | head -n1)" "$lr" \
		"$(aarch64-linux-gnu-addr2line -f -e "$prog" "$(printf %x $((0x$lr - 4)))" | head -n1)" "$sp"
done >&2

if command -v perf >/dev/null; then
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	log "perf report --header-only:"
	HOME=$tmp PERF_CONFIG=/dev/null perf report --header-only -i "$case_dir/perf.data" 2>&1 |
		grep -E '^# (arch|event|hostname|os release)' >&2
	log "perf script (perf 6.1 on x86_64 has no arm64 unwinder: only the comm is expected):"
	HOME=$tmp PERF_CONFIG=/dev/null perf --buildid-dir "$tmp/none" script \
		-i "$case_dir/perf.data" --symfs "${symfs_copy%"$prog"}" -F comm,tid,ip,sym 2>&1 |
		sort | uniq -c >&2
fi
if [ -x build/kfold ]; then
	log "build/kfold (compare with $case_dir/expected.unwound.folded):"
	build/kfold --symfs "${symfs_copy%"$prog"}" --kallsyms /dev/null --buildid-dir /tmp/kfold-fx/none \
		--stats "$case_dir/perf.data" 2>&1 | grep -v 'bytes read' >&2 || true
fi
log "now check the stacks by hand ($case_dir/README) and update $case_dir/expected.unwound.folded; write expected.folded with scripts/oracle.sh $case_dir"
