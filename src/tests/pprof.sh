#!/usr/bin/env bash
# pprof.sh KFOLD SRCDIR: `kfold --format pprof` (README "pprof profiles"),
# read back by an independent reader, Debian's `go tool pprof`:
#  - on every committed capture, with inline frames and --no-inline (and
#    --samples on a few): the profile's stacks (`pprof -raw`: each sample's
#    locations, each location's lines outermost first, the labels comm,
#    pid and tid as the root) and their values equal `kfold --tid`'s
#    folded stacks and counts, line for line (scripts/pprof-folded.py);
#  - `pprof -top` totals the same as the folded counts, and `-traces`
#    gives the folded stacks and values (inline-dwarf);
#  - the sample types and period type: samples/count and the event with
#    its unit (cpu-clock: nanoseconds) as the default; --samples: only
#    samples/count;
#  - the program's mapping is the first (pprof's "File:") and carries
#    the build-id readelf reads from the file; an inline chain is one
#    location with several lines, innermost first, with their lines;
#  - functions: the start line is the source line that declares the
#    function (the fixtures' sources), a system name is the mangled name
#    c++filt demangles to the function's name (C++, with and without
#    inline frames);
#  - the same bytes twice and with --jobs 1 and 2;
#  - the labels verdict and context: per verdict, the samples `kfold
#    report` counts;
#  - a capture cut in the middle: exit status 1 and a profile of its
#    readable part, equal to the folded output of the same file;
#  - refused with exit status 2: --context, --pid, --kernel,
#    --compat=perf, --format json together with pprof.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
fail=0
no() { echo "FAIL: $*"; fail=1; }
command -v go >/dev/null || { echo "FAIL: go (Debian golang-go) is missing: scripts/setup.sh installs it"; exit 1; }
pprof=$(go env GOTOOLDIR)/pprof
export PPROF_TMPDIR=$tmp KF_PPROF=$pprof

n=0
for d in "$src"/testdata/cases/*/; do
	[ -e "$d/perf.data" ] || continue
	name=$(basename "$d")
	kf_case "$d"
	modes=("" --no-inline)
	# sample counts for a few (the values are the same numbers as the
	# weights, from the same stacks)
	case $name in syscall|system|dwarf-threads|cxx) modes+=(--samples) ;; esac
	for mode in "${modes[@]}"; do
		"$kfold" -q "${KF_CASE[@]}" $mode --format pprof -o "$tmp/p.pb.gz" "$d/perf.data"
		rc=$?
		"$kfold" -q "${KF_CASE[@]}" $mode --tid "$d/perf.data" > "$tmp/want" 2>/dev/null
		rc2=$?
		[ $rc -eq $rc2 ] || no "$name $mode: exit status $rc, folded $rc2"
		if ! python3 "$src/scripts/pprof-folded.py" ${mode:+$([ "$mode" = --samples ] && echo --samples)} \
			"$tmp/p.pb.gz" > "$tmp/got" 2> "$tmp/err"; then
			no "$name $mode: pprof cannot read the profile: $(head -3 "$tmp/err")"
			continue
		fi
		if ! cmp -s "$tmp/got" "$tmp/want"; then
			no "$name $mode: the profile's stacks differ from the folded ones"
			diff "$tmp/got" "$tmp/want" | head -4 | cut -c1-300
		fi
		n=$((n + 1))
	done
done
[ $n -ge 80 ] || no "only $n capture/mode pairs compared"
echo "pprof: $n capture/mode pairs equal their folded stacks"

d=$src/testdata/cases/inline-dwarf
kf_case "$d"
"$kfold" -q "${KF_CASE[@]}" --format pprof -o "$tmp/i.pb.gz" "$d/perf.data" || no "inline-dwarf: exit $?"
"$kfold" -q "${KF_CASE[@]}" --format pprof -o "$tmp/i2.pb.gz" --jobs 1 "$d/perf.data"
"$kfold" -q "${KF_CASE[@]}" --format pprof --jobs 2 "$d/perf.data" > "$tmp/i3.pb.gz"
cmp -s "$tmp/i.pb.gz" "$tmp/i2.pb.gz" && cmp -s "$tmp/i.pb.gz" "$tmp/i3.pb.gz" ||
	no "the profile's bytes change between runs or with --jobs"
"$pprof" -symbolize=none -raw "$tmp/i.pb.gz" > "$tmp/raw" 2>&1 || no "pprof -raw: $(head -3 "$tmp/raw")"
grep -qx 'PeriodType: cpu-clock nanoseconds' "$tmp/raw" || no "period type: $(grep PeriodType "$tmp/raw")"
grep -q '^samples/count cpu-clock/nanoseconds\[dflt\]' "$tmp/raw" || no "sample types"
grep -qx 'Comment: host vm' "$tmp/raw" || no "the host comment"
# the program first, with its build-id as readelf reads it
bin=$(kf_symfs "$d")/tmp/kfold-fx/bin/inl-gcc-O2
bid=$(readelf -n "$bin" | sed -n 's/^ *Build ID: *//p')
[ -n "$bid" ] || no "no build-id read from $bin"
grep -Eq "^[0-9]+: 0x[0-9a-f]+/0x[0-9a-f]+/0x[0-9a-f]+ /tmp/kfold-fx/bin/inl-gcc-O2 $bid \[FN\]\[FL\]\[LN\]\[IN\]$" "$tmp/raw" ||
	no "the program's mapping: $(grep inl-gcc-O2 "$tmp/raw" | head -2)"
"$pprof" -symbolize=none -top "$tmp/i.pb.gz" > "$tmp/top" 2>&1
grep -q '^File: inl-gcc-O2$' "$tmp/top" || no "pprof's File: $(grep File: "$tmp/top")"
# an inline chain: rotl inlined into mix into accumulate into
# compute_stats, innermost first, each with its line in inl.c
grep -A3 -E '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ rotl .*/inl\.c:[0-9]+ s=[0-9]+$' "$tmp/raw" | head -4 > "$tmp/chain"
sed -E 's/^ +([0-9]+: 0x[0-9a-f]+ M=[0-9]+ )?//; s/ \S*\/inl\.c:[0-9]+ s=[0-9]+$//' "$tmp/chain" | tr '\n' ' ' > "$tmp/names"
[ "$(cat "$tmp/names")" = "rotl mix accumulate compute_stats " ] ||
	no "an inline chain's lines: $(cat "$tmp/chain")"
# functions: their start line (s=) is the line of the source that
# declares them (the fixture's sources are in testdata/src), and a system
# name that differs from the name is the mangled name, which c++filt
# demangles (without parameters, as perf and kfold name) to the name
check_functions() {   # RAW WHAT MIN-STARTS MIN-MANGLED
	python3 - "$src" "$@" <<'PY'
import os, re, subprocess, sys
src, raw, what, min_starts, min_mangled = sys.argv[1:]
loc = re.compile(r"^ +(?:\d+: 0x[0-9a-f]+ M=\d+ )?(.*) (\S*):(\d+) s=(\d+)(?:\((.*)\))?$")
funcs = set()
for line in open(raw):
    m = loc.match(line.rstrip("\n"))
    if m:
        funcs.add((m.group(1), m.group(2), int(m.group(4)), m.group(5)))
bad, starts, mangled = [], 0, []
for name, path, start, system in sorted(funcs):
    if system:
        if not system.startswith("_Z"):
            bad.append("%s: system name %s is not a mangled C++ name" % (name, system))
        else:
            mangled.append((name, system))
    if start and "testdata/src/" in path and "lambda" not in name and "operator" not in name:
        f = os.path.join(src, "testdata/src", path.split("testdata/src/", 1)[1])
        ident = re.findall(r"[A-Za-z_]\w*", re.sub(r"<[^<>]*>", "", name))[-1]
        text = open(f, errors="replace").read().split("\n")
        if start > len(text) or ident not in text[start - 1]:
            bad.append("%s: starts at %s:%d, which reads %r" % (name, path, start,
                       text[start - 1] if start <= len(text) else None))
        starts += 1
if mangled:
    out = subprocess.run(["c++filt", "-p"], input="\n".join(s for _, s in mangled) + "\n",
                         capture_output=True, text=True).stdout.split("\n")
    for (name, system), dem in zip(mangled, out):
        if dem != name:
            bad.append("%s: system name %s demangles to %s" % (name, system, dem))
if starts < int(min_starts) or len(mangled) < int(min_mangled):
    bad.append("%d start lines in the fixture's sources, %d mangled names" % (starts, len(mangled)))
for b in bad[:5]:
    print("FAIL %s: %s" % (what, b))
if not bad:
    print("pprof: %s: %d start lines checked in the sources, %d system names demangle to "
          "their names" % (what, starts, len(mangled)))
sys.exit(1 if bad else 0)
PY
}
check_functions "$tmp/raw" inline-dwarf 4 0 || fail=1
d2=$src/testdata/cases/cxx-scope
kf_case "$d2"
"$kfold" -q "${KF_CASE[@]}" --format pprof -o "$tmp/x.pb.gz" "$d2/perf.data" || no "cxx-scope: exit $?"
"$pprof" -symbolize=none -raw "$tmp/x.pb.gz" > "$tmp/xraw" 2>&1
check_functions "$tmp/xraw" cxx-scope 5 5 || fail=1
"$kfold" -q "${KF_CASE[@]}" --no-inline --format pprof -o "$tmp/x.pb.gz" "$d2/perf.data"
"$pprof" -symbolize=none -raw "$tmp/x.pb.gz" > "$tmp/xraw" 2>&1
check_functions "$tmp/xraw" "cxx-scope --no-inline" 0 3 || fail=1
kf_case "$d"
# -top's total against the folded total (cpu-clock: ns shown as ms)
want=$("$kfold" -q "${KF_CASE[@]}" "$d/perf.data" | awk '{ s += $NF } END { print s / 1000000 }')
grep -q "accounting for ${want}ms, 100% of ${want}ms total" "$tmp/top" ||
	no "pprof -top's total is not ${want}ms: $(grep accounting "$tmp/top")"
# -traces: each sample's labels and frames (leaf first, "(inline)" on
# inlined calls) and value; summed per stack, kfold --tid's folded lines
"$pprof" -symbolize=none -traces "$tmp/i.pb.gz" > "$tmp/traces" 2>&1
"$kfold" -q "${KF_CASE[@]}" --tid "$d/perf.data" > "$tmp/tid.folded"
python3 - "$tmp/traces" "$tmp/tid.folded" <<'PY' || fail=1
import re, sys
unit = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
got, labels, frames, value = {}, {}, [], None
def flush():
    if value is not None:
        key = "%s-%s/%s;%s" % (labels.get("comm", "").replace(" ", "_"), labels.get("pid", ""),
                               labels.get("tid", ""),
                               ";".join(reversed(frames)))
        got[key] = got.get(key, 0) + value
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    if line.startswith("-----------+"):
        flush()
        labels, frames, value = {}, [], None
        continue
    m = re.match(r"^ +(\w+):  (.*)$", line)
    if m and value is None:
        labels[m.group(1)] = m.group(2)
        continue
    m = re.match(r"^ +([0-9.]+)(ns|us|ms|s) +(.*)$", line)
    if m and value is None:
        value = round(float(m.group(1)) * unit[m.group(2)])
        frames.append(m.group(3))
        continue
    if value is not None and line.strip():
        frames.append(line.strip())
flush()
got = {re.sub(r" \(inline\)", "", k): v for k, v in got.items()}
want = {}
for line in open(sys.argv[2]):
    k, v = line.rstrip("\n").rsplit(" ", 1)
    want[k] = want.get(k, 0) + int(v)
if got != want:
    diff = sorted(set(got.items()) ^ set(want.items()))[:4]
    print("FAIL pprof -traces: %d stacks, folded %d; first differences: %s" % (len(got), len(want), diff))
    sys.exit(1)
print("pprof: -traces gives the %d folded stacks and their values" % len(got))
PY
# --samples: one sample type, counts
"$kfold" -q "${KF_CASE[@]}" --samples --format pprof -o "$tmp/s.pb.gz" "$d/perf.data"
"$pprof" -symbolize=none -raw "$tmp/s.pb.gz" > "$tmp/raw" 2>&1
grep -qx 'samples/count' "$tmp/raw" || no "--samples: $(grep -A1 '^Samples:' "$tmp/raw" | tail -1)"
samples=$("$kfold" -q "${KF_CASE[@]}" --samples "$d/perf.data" | awk '{ s += $NF } END { print s }')
"$pprof" -symbolize=none -top "$tmp/s.pb.gz" 2>&1 | grep -q "accounting for $samples, 100% of $samples total" ||
	no "--samples: pprof -top's total is not $samples"

# the verdict label: per verdict, the samples the JSON report counts
# (kfold's classifier, tested against its vectors in verdicts.sh)
for c in syscall system threads dwarf-syscall; do
	d=$src/testdata/cases/$c
	kf_case "$d"
	"$kfold" -q "${KF_CASE[@]}" --format pprof -o "$tmp/v.pb.gz" "$d/perf.data"
	"$kfold" report -q "${KF_CASE[@]}" "$d/perf.data" > "$tmp/v.json"
	"$pprof" -symbolize=none -tags -sample_index=samples "$tmp/v.pb.gz" > "$tmp/tags" 2>&1
	python3 - "$tmp/v.json" "$tmp/tags" "$c" <<'PY' || fail=1
import json, re, sys
report, tags, case = sys.argv[1:]
want = {v: t["samples"] for v, t in json.load(open(report))["totals"]["verdicts"].items()
        if t["samples"]}
got, section = {}, None
for line in open(tags):
    m = re.match(r"^ (\w+): Total", line)
    if m:
        section = m.group(1)
        continue
    m = re.match(r"^\s+([\d.]+) \(\s*[\d.]+%\): (\S+)$", line)
    if m and section == "verdict":
        got[m.group(2)] = int(float(m.group(1)))
if got != want:
    print("FAIL %s: the verdict labels count %s, the report %s" % (case, got, want))
    sys.exit(1)
PY
done
grep -q '^ context: Total' "$tmp/tags" || no "no context label"

# a capture cut in the middle of its records
d=$src/testdata/cases/syscall
kf_case "$d"
size=$(stat -c %s "$d/perf.data")
head -c $((size / 2)) "$d/perf.data" > "$tmp/cut.data"
"$kfold" -q "${KF_CASE[@]}" --format pprof -o "$tmp/cut.pb.gz" "$tmp/cut.data" 2> "$tmp/err"
rc=$?
"$kfold" -q "${KF_CASE[@]}" --tid "$tmp/cut.data" > "$tmp/want" 2>/dev/null
[ $rc -eq $? ] || no "a cut capture: exit status $rc, folded another"
python3 "$src/scripts/pprof-folded.py" "$tmp/cut.pb.gz" > "$tmp/got" && [ -s "$tmp/got" ] &&
	cmp -s "$tmp/got" "$tmp/want" || no "a cut capture's profile is not its folded stacks"

# what a profile cannot say
for opt in --context --exclude=attributed --pid --tid --kernel --compat=perf "--format json"; do
	"$kfold" -q "${KF_CASE[@]}" --format pprof $opt -o "$tmp/x.pb.gz" "$d/perf.data" 2> "$tmp/err"
	rc=$?
	[ $rc -eq 2 ] && grep -q "format pprof does not take" "$tmp/err" ||
		no "--format pprof $opt: exit $rc, $(head -1 "$tmp/err")"
done
exit $fail
