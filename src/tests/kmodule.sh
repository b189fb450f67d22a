#!/usr/bin/env bash
# kmodule.sh KFOLD SRCDIR: kernel module frames without symbols, on a
# capture crafted at test time (these kernels have no modules):
# scripts/make-kernel-capture.py writes samples whose leaf is in a module
# mapped as perf record synthesizes it (a .ko path, a .ko.xz path with
# '-' in the name, a "[name]" MMAP), under a kernel caller; the kallsyms
# has no symbol in the modules.  perf 6.1 prints the dso as "[mac80211]",
# "[snd_hda_intel]" ('-' -> '_' from a path only), "[nf-conntrack]", so
# stackcollapse makes "[[mac80211]]" of them; kfold gives the same in both
# modes.  The expected lines were checked against perf script | collapse
# on this file; where perf is installed the test compares with it again.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

command -v gcc >/dev/null || { echo "SKIP: gcc is not installed"; exit 77; }
kdir=$src/testdata/src/kvmlinux
gcc -O2 -g -ffreestanding -fno-pic -fno-pie -mcmodel=kernel \
	-fno-asynchronous-unwind-tables -nostdlib -static -no-pie \
	-Wl,--build-id=0x1234567890abcdef1234567890abcdef12345678 \
	-Wl,-T,"$kdir/kvm.lds" -o "$tmp/vmlinux" "$kdir/kvm.c" || exit 1
nm "$tmp/vmlinux" | awk '$2 ~ /^[Tt]$/' | sort > "$tmp/kallsyms"
tt=$(awk '$3 == "task_tick" { print $1 }' "$tmp/kallsyms")
[ -n "$tt" ] || { echo "FAIL: no task_tick in the synthetic vmlinux"; exit 1; }
ret=$(printf '%x' $((0x$tt + 0x10)))
cat > "$tmp/chains" <<EOF
1000 ffffffffc0a01010 $ret
1000 ffffffffc0b02020 $ret
1000 ffffffffc0c00010 $ret
1000 ffffffffc0a00010 $ret
EOF
python3 "$src/scripts/make-kernel-capture.py" --vmlinux "$tmp/vmlinux" --kaslr 0 \
	--release 6.1.0-kfold-test \
	--module /lib/modules/6.1.0-kfold-test/kernel/net/mac80211/mac80211.ko:ffffffffc0a00000:10000 \
	--module '[nf-conntrack]:ffffffffc0b00000:10000' \
	--module /lib/modules/6.1.0-kfold-test/kernel/sound/snd-hda-intel.ko.xz:ffffffffc0c00000:1000 \
	"$tmp/chains" "$tmp/perf.data" || exit 1
cat > "$tmp/want" <<'EOF'
kworker;task_tick;[[mac80211]] 2000
kworker;task_tick;[[nf-conntrack]] 1000
kworker;task_tick;[[snd_hda_intel]] 1000
EOF
mkdir -p "$tmp/empty" "$tmp/home" "$tmp/symfs"
fail=0
for mode in --compat=perf ""; do
	"$kfold" -q $mode --symfs "$tmp/symfs" --kallsyms "$tmp/kallsyms" \
		--buildid-dir "$tmp/empty" "$tmp/perf.data" > "$tmp/got" || exit 1
	if ! diff -u "$tmp/want" "$tmp/got"; then
		echo "FAIL: kfold ${mode:-(default)}: module frames"
		fail=1
	else
		echo "ok   kfold ${mode:-(default)}: module frames named [[name]] as perf's"
	fi
done
if command -v perf >/dev/null; then
	(cd "$tmp" && HOME=$tmp/home PERF_CONFIG=/dev/null LC_ALL=C \
		perf --buildid-dir "$tmp/empty" script --symfs "$tmp/symfs" \
		--kallsyms "$tmp/kallsyms" -i "$tmp/perf.data" 2>/dev/null) > "$tmp/script.txt"
	python3 "$src/scripts/collapse-perf.py" "$tmp/script.txt" > "$tmp/perf.folded"
	if ! diff -u "$tmp/perf.folded" "$tmp/want"; then
		echo "FAIL: perf script | collapse gives another output on this capture"
		fail=1
	else
		echo "ok   perf script | collapse on the same file agrees"
	fi
fi
exit $fail
