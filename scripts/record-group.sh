#!/usr/bin/env bash
# record-group.sh: (re)records testdata/cases/group, a leader-sampled group
# capture (`perf record -e '{cpu-clock,task-clock}:uS'`: PERF_SAMPLE_READ,
# read_format ID|GROUP|LOST), and nothing else in testdata.
#
# The workload is testdata/src/group/prog.c, freestanding (no libc), built
# into /tmp/kfold-fx-group/prog (the path the capture records) and copied
# into the case's own symfs, so the case needs no other file; user-only
# events keep kernel frames out.  Then scripts/oracle.sh writes
# expected.folded (the first event, cpu-clock) and expected.task.folded
# (the variant --event task-clock).
#
# usage: scripts/record-group.sh     (as root, from anywhere)
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(dirname "$script_dir")
case_dir=$root/testdata/cases/group
bin_dir=/tmp/kfold-fx-group
prog=$bin_dir/prog

mkdir -p "$bin_dir"
gcc -std=gnu11 -O0 -fno-omit-frame-pointer -nostdlib -static -no-pie -fno-pie \
	-Wl,--build-id "$root/testdata/src/group/prog.c" -o "$prog"

rm -rf "$case_dir"
mkdir -p "$case_dir/symfs$bin_dir"
cp "$prog" "$case_dir/symfs$prog"
cmd=(taskset -c 1 perf record -N -o perf.data -e '{cpu-clock,task-clock}:uS' -F 1000 -g -- "$prog")
(cd "$case_dir" && "${cmd[@]}") > /dev/null 2>&1
chmod 644 "$case_dir/perf.data"
: > "$case_dir/args"
: > "$case_dir/corrections"
{
	echo "group: {cpu-clock,task-clock}:uS, a group sampled by its leader (PERF_SAMPLE_READ),"
	echo "frame-pointer callchains, the freestanding testdata/src/group/prog.c; own symfs"
	echo "recorded with (cwd = case directory), by scripts/record-group.sh:"
	echo "  taskset -c 1 perf record -N -o perf.data -e '{cpu-clock,task-clock}:uS' -F 1000 -g -- $prog"
	echo "Each sample carries both counters' values; perf delivers one sample per"
	echo "value, weighted by the counter's growth since the last sample of its id"
	echo "(README \"Weights of PERF_SAMPLE_READ samples\").  expected.folded is the"
	echo "first event (cpu-clock), expected.task.folded --event task-clock."
} > "$case_dir/README"
printf 'task|--event task-clock||--event-filter=task-clock\n' > "$case_dir/variants"
"$script_dir/oracle.sh" "$case_dir" > "$case_dir/expected.folded"
"$script_dir/oracle.sh" "$case_dir" -- --event-filter=task-clock \
	> "$case_dir/expected.task.folded"
[ -s "$case_dir/expected.folded" ] && [ -s "$case_dir/expected.task.folded" ] || {
	echo "record-group.sh: an oracle output is empty" >&2
	exit 1
}
echo "recorded $case_dir: $(stat -c %s "$case_dir/perf.data") bytes," \
	"$(wc -l < "$case_dir/expected.folded") + $(wc -l < "$case_dir/expected.task.folded") stacks"
