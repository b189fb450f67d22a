#!/usr/bin/env bash
# verdicts.sh KFOLD SRCDIR: the folded rewrite and the JSON report give
# every stack the same verdict.
#
# The two classify through different code: the report (kf_ctx_walk_range)
# classifies each distinct stack from its whole path; the rewrite behind
# --exclude and --context (kf_ctx_rewrite) classifies each distinct
# kernel part once per kind of root and applies the result to every
# stack ending in it.  So on every committed capture, for every verdict V
# the report's samples of verdict V must be exactly what `--exclude V`
# takes out of the total, and the [V] pseudo-frames of --context=verdict
# must carry the samples of the report's stacks of verdict V that have
# a kernel frame (frame_table kind "kernel").  Counts are samples (--samples), so periods cannot hide
# a moved stack.
set -euo pipefail
kfold=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"

verdicts=(on-behalf attributed idle kthread user unknown)
fail=0
checked=0
classified=0
for dir in "$src"/testdata/cases/*/; do
	name=$(basename "$dir")
	[ -e "$dir/perf.data" ] || continue
	kf_case "$dir"
	run() { (cd "$tmp" && "$kfold" -q "${KF_CASE[@]}" "$@" "$dir/perf.data"); }
	# a capture kfold refuses (no samples of the event, say) is
	# refused the same way by both commands; jobs.sh compares those
	if ! run --format json > "$tmp/report.json" 2> /dev/null; then
		continue
	fi
	run --samples > "$tmp/all.folded"
	run --samples --context=verdict > "$tmp/verdict.folded"
	for v in "${verdicts[@]}"; do
		run --samples --exclude "$v" > "$tmp/excl.$v"
	done
	if ! python3 - "$tmp" "$name" "${verdicts[@]}" <<'EOF'
import json, sys

tmp, name, verdicts = sys.argv[1], sys.argv[2], sys.argv[3:]

def total(path):
    n = 0
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            n += int(line.rsplit(" ", 1)[1])
    return n

def markers(path):
    by = {}
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        for line in f:
            stack, count = line.rsplit(" ", 1)
            # "[unknown]" is the frame of an unmapped address; the
            # unknown verdict's frame is "[unknown:WHY]"
            found = [fr for fr in stack.split(";")
                     if fr.startswith("[") and fr.endswith("]") and fr != "[unknown]"
                     and fr[1:-1].split(":")[0] in verdicts]
            if len(found) > 1:
                print("FAIL %s: two verdict frames in %s" % (name, stack))
                sys.exit(1)
            if found:
                v = found[0][1:-1].split(":")[0]
                by[v] = by.get(v, 0) + int(count)
    return by

with open(tmp + "/report.json") as f:
    rep = json.load(f)
report, kernel = {}, {}
for s in rep["stacks"]:
    report[s["verdict"]] = report.get(s["verdict"], 0) + s["samples"]
    if any(rep["frame_table"][i]["kind"] == "kernel" for i in s["frame_info"]):
        kernel[s["verdict"]] = kernel.get(s["verdict"], 0) + s["samples"]
everything = total(tmp + "/all.folded")
bad = []
if sum(report.values()) != everything:
    bad.append("report %d samples, folded %d" % (sum(report.values()), everything))
for v in verdicts:
    left = total(tmp + "/excl." + v)
    if everything - left != report.get(v, 0):
        bad.append("--exclude %s takes %d samples, the report has %d"
                   % (v, everything - left, report.get(v, 0)))
# a marker goes before the outermost kernel frame: only stacks with
# kernel frames have one
got = markers(tmp + "/verdict.folded")
if got != kernel:
    bad.append("[verdict] frames carry %s, the report's stacks with kernel frames %s"
               % (sorted(got.items()), sorted(kernel.items())))
if bad:
    for b in bad:
        print("FAIL %s: %s" % (name, b))
    sys.exit(1)
print("ok   %s: %s" % (name, ", ".join("%s %d" % (v, report[v]) for v in sorted(report))))
sys.exit(0 if report else 2)
EOF
	then
		fail=1
	fi
	checked=$((checked + 1))
	if grep -q '"verdict": *"\(on-behalf\|attributed\|idle\|kthread\)"' "$tmp/report.json"; then
		classified=$((classified + 1))
	fi
done
echo "$checked captures, $classified with kernel verdicts"
# the check means something only if kernel stacks were classified
if [ "$classified" -lt 5 ]; then
	echo "FAIL: only $classified captures have kernel verdicts"
	fail=1
fi
exit "$fail"
