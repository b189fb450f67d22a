#!/usr/bin/env bash
# record-stitch.sh: (re)records testdata/cases/stitch, a --call-graph dwarf
# capture of a recursion that rises and falls slowly, whose stack copies
# hold the whole stack, for --stitch (src/tests/stitch.sh cuts them).
# Run as root from the repository root.
#
# The workload (testdata/src/stitch/stitch.c) recurses 60 levels deep and
# back, about 0.3 ms per level each way; its deepest stack is about 6 KiB,
# within the 8192-byte copies.  Sampled at 500 Hz, so that the copies,
# which perf writes whole, keep the file near 1 MB.  The binary is static
# and built without frame pointers, so the case's symfs is that one file
# at the recorded path /tmp/kfold-fx-stitch/bin/stitch and only its CFI
# finds the callers; only user callchains are recorded (--user-callchains):
# the kernel's frames would need this machine's kallsyms.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=/tmp/kfold-fx/bin/stitch
case=testdata/cases/stitch
bid() { readelf -n "$1" | sed -n 's/.*Build ID: //p'; }
for lib in libc.so.6 ld-linux-x86-64.so.2; do
	[ "$(bid "/usr/lib/x86_64-linux-gnu/$lib")" = \
	  "$(bid "testdata/symfs/usr/lib/x86_64-linux-gnu/$lib")" ] || {
		echo "record-stitch.sh: this machine's $lib is not testdata/symfs's" >&2; exit 1; }
done
mkdir -p "$(dirname "$bin")" "$case" "testdata/symfs$(dirname "$bin")"
gcc -std=gnu11 -O1 -g -fomit-frame-pointer -o "$bin" testdata/src/stitch/stitch.c
cp "$bin" "testdata/symfs$bin"
cmd=(perf record -N -e cpu-clock -F 500 --call-graph dwarf,8192 --user-callchains
	-o "$case/perf.data" -- "$bin" 0.4)
taskset -c 1 "${cmd[@]}"
: > "$case/args"
printf 'Recorded by scripts/record-stitch.sh:\n  taskset -c 1 %s\n' "${cmd[*]}" > "$case/README"
scripts/oracle.sh "$case" > "$case/expected.folded"
echo "$case: $(wc -c < "$case/perf.data") bytes, $(wc -l < "$case/expected.folded") stacks"
