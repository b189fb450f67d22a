#!/usr/bin/env bash
# record-tracepoint.sh: (re)records testdata/cases/tracepoint, a pipe-mode
# capture of the tracepoint sched:sched_switch (README "What kfold reads":
# tracepoints are named from the stream's event descriptions and, without
# those, from its tracing data).  Run as root from the repository root.
#
# The workload (testdata/src/tracepoint/tpsleep.c) has no libc, so the
# case's own symfs is one small static binary at the recorded path
# /tmp/kfold-fx-tracepoint/bin/tpsleep.  Only user callchains are recorded
# (--user-callchains): the kernel's frames would need this machine's
# kallsyms, which the committed testdata/kallsyms.zst is not.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
bin=/tmp/kfold-fx-tracepoint/bin/tpsleep
case=testdata/cases/tracepoint
mkdir -p "$(dirname "$bin")" "$case/symfs$(dirname "$bin")"
gcc -std=gnu11 -O2 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer \
	-fno-optimize-sibling-calls -fno-inline -fno-stack-protector \
	-fcf-protection=none -static -nostdlib -o "$bin" testdata/src/tracepoint/tpsleep.c
cp "$bin" "$case/symfs$bin"
cmd=(perf record -N -e sched:sched_switch --user-callchains -g -o - -- "$bin")
taskset -c 1 "${cmd[@]}" > "$case/perf.data"
: > "$case/args"
printf 'Recorded by scripts/record-tracepoint.sh:\n  taskset -c 1 %s > perf.data\n' "${cmd[*]}" > "$case/README"
scripts/oracle.sh "$case" > "$case/expected.folded"
# perf script prints no file names on a tracepoint's frame lines, so
# stackcollapse folds the comm alone (docs/perf-compat.md F9); the default
# mode's expectation is the oracle with the file names asked for
scripts/oracle.sh "$case" -F +dso > "$case/expected.dso.folded"
cat > "$case/corrections" <<'EOT'
# perf script's default fields for a tracepoint print no "(dso)" on the
# frame lines, so stackcollapse-perf.pl drops every frame and the oracle
# is "tpsleep 30" (docs/perf-compat.md F9; --compat=perf gives that).
# kfold folds the frames: the expectation is the oracle of
# `perf script -F +dso` (scripts/oracle.sh testdata/cases/tracepoint -F +dso),
# whose frame lines stackcollapse-perf.pl reads.
source	expected.dso.folded
EOT
echo "$case: $(wc -c < "$case/perf.data") bytes, $(wc -l < "$case/expected.folded") stacks"
