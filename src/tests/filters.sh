#!/usr/bin/env bash
# filters.sh KFOLD SRCDIR: perf script's filters (--pids, --tids, --comms,
# --cpus, --time) beyond the golden variants (golden.sh compares ten of
# them with perf's output on committed captures):
#  - the two perf oracles whose arguments hold spaces, which a variants
#    line cannot carry (scripts/record-filter-variants.sh made them):
#    two absolute time ranges, and a comm with a space in it;
#  - the filters compose: --comms A with --time is the --time output's
#    stacks of A, and a filter that keeps everything changes nothing;
#  - --jobs 1 and 2 give the same bytes with filters;
#  - the JSON report states them (validated against the schema) and its
#    totals are the filtered folded output's; --stats counts the samples
#    left out, which with the kept ones make every sample of the event;
#  - what perf refuses is refused with exit status 2 and a message:
#    --cpus on samples without a CPU, percentages on a pipe capture
#    (its header's time span is 0 .. 0), and bad lists and times;
#  - a filter that leaves nothing out gives empty output and says so.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp" || exit 1
python3 -c 'import jsonschema' 2>/dev/null ||
	{ echo "FAIL: python3-jsonschema is not installed (scripts/setup.sh installs it)"; exit 1; }
fail=0
cases=$src/testdata/cases
no() { echo "FAIL: $*"; fail=1; }
total() { awk '{ s += $NF } END { print s + 0 }' "$1"; }

# the oracles with spaces in their arguments (--compat=perf --no-inline,
# as golden.sh compares)
kf_case "$cases/system"
"$kfold" -q "${KF_CASE[@]}" --compat=perf --no-inline \
	--time '1266.45,1266.5 1266.55,1266.6' "$cases/system/perf.data" > "$tmp/ranges" ||
	no "two time ranges: exit $?"
diff -u "$cases/system/expected.filter-ranges.folded" "$tmp/ranges" ||
	no "two time ranges differ from perf script --time"
kf_case "$cases/threads"
"$kfold" -q "${KF_CASE[@]}" --compat=perf --no-inline \
	--comms 'beta worker,gamma_sys' "$cases/threads/perf.data" > "$tmp/space" ||
	no "a comm with a space: exit $?"
diff -u "$cases/threads/expected.filter-space.folded" "$tmp/space" ||
	no "a comm with a space differs from perf script --comms"
grep -q '^beta_worker;' "$tmp/space" && grep -q '^gamma_sys;' "$tmp/space" ||
	no "the comm with a space (folded beta_worker) or gamma_sys kept nothing"

# composition, and the identity
kf_case "$cases/system"
d=$cases/system/perf.data
"$kfold" -q "${KF_CASE[@]}" --time 1266.5, "$d" > "$tmp/t" || no "--time: exit $?"
"$kfold" -q "${KF_CASE[@]}" --time 1266.5, --comms syscall "$d" > "$tmp/tc" ||
	no "--time --comms: exit $?"
grep '^syscall;' "$tmp/t" > "$tmp/t-syscall"
diff -u "$tmp/t-syscall" "$tmp/tc" || no "--comms syscall with --time is not --time's syscall lines"
[ -s "$tmp/tc" ] || no "--time --comms kept nothing"
"$kfold" -q "${KF_CASE[@]}" "$d" > "$tmp/all"
"$kfold" -q "${KF_CASE[@]}" --cpus 0-1 --time 0%-100% "$d" > "$tmp/id" || no "identity: exit $?"
cmp -s "$tmp/all" "$tmp/id" || no "--cpus 0-1 --time 0%-100% changed the output"

# --jobs
for f in "--comms syscall" "--time 10%/3" "--tids 0"; do
	read -r -a fa <<< "$f"
	"$kfold" -q "${KF_CASE[@]}" --jobs 1 "${fa[@]}" "$d" > "$tmp/j1"
	"$kfold" -q "${KF_CASE[@]}" --jobs 2 "${fa[@]}" "$d" > "$tmp/j2"
	cmp -s "$tmp/j1" "$tmp/j2" || no "$f: --jobs 1 and 2 differ"
done

# the report and --stats
"$kfold" report -q "${KF_CASE[@]}" --comms syscall --time 10%-90% "$d" > "$tmp/r.json" ||
	no "report with filters: exit $?"
"$kfold" -q "${KF_CASE[@]}" --comms syscall --time 10%-90% --stats "$d" \
	> "$tmp/r.folded" 2> "$tmp/r.stats"
"$kfold" -q "${KF_CASE[@]}" --stats "$d" > /dev/null 2> "$tmp/all.stats"
python3 - "$src/docs/kfold-report.schema.json" "$tmp/r.json" "$(total "$tmp/r.folded")" \
	"$tmp/r.stats" "$tmp/all.stats" <<'EOF' || fail=1
import json, re, sys
import jsonschema
schema, report, folded_total, stats, all_stats = sys.argv[1:]
r = json.load(open(report))
jsonschema.validate(r, json.load(open(schema)))
f = r["capture"]["filters"]
ok = True
def no(msg):
    global ok
    print("FAIL:", msg)
    ok = False
if f.get("comms") != "syscall" or f.get("time") != "10%-90%" or "pids" in f:
    no("the report's filters are %r" % f)
if len(f.get("time_ns", [])) != 1 or not 0 < f["time_ns"][0]["start"] < f["time_ns"][0]["end"]:
    no("the report's time range is %r" % f.get("time_ns"))
if r["totals"]["period"] != int(folded_total):
    no("the report's period %d is not the folded total %s" % (r["totals"]["period"], folded_total))
def folded(path):
    return int(re.search(r"folded (\d+)", open(path).read()).group(1))
m = re.search(r"samples left out by the filters (\d+)", open(stats).read())
if not m:
    no("--stats does not count the samples left out")
elif int(m.group(1)) != f["samples_left_out"]:
    no("--stats says %s left out, the report %d" % (m.group(1), f["samples_left_out"]))
elif int(m.group(1)) + folded(stats) != folded(all_stats):
    no("left out %s + folded %d is not every folded sample %d" %
       (m.group(1), folded(stats), folded(all_stats)))
if r["capture"]["samples_folded"] != folded(stats):
    no("the report folded %d samples, --stats %d" % (r["capture"]["samples_folded"], folded(stats)))
sys.exit(0 if ok else 1)
EOF
"$kfold" report -q "${KF_CASE[@]}" "$d" | grep -q '"filters"' && no "a report without filters has a filters member"

# refusals: exit status 2, a message naming the option, nothing written
refuse() {   # CASE-DIR STDIN(-|"") WORDS... (the first word is the option)
	local dir=$1 in=$2 rc
	shift 2
	kf_case "$dir"
	if [ "$in" = - ]; then
		"$kfold" "${KF_CASE[@]}" "$@" - < "$dir/perf.data" > "$tmp/out" 2> "$tmp/err"
	else
		"$kfold" "${KF_CASE[@]}" "$@" "$dir/perf.data" > "$tmp/out" 2> "$tmp/err"
	fi
	rc=$?
	[ "$rc" = 2 ] || no "$*: exit $rc, not 2"
	[ -s "$tmp/out" ] && no "$*: wrote output"
	grep -q -- "$1" "$tmp/err" || no "$*: the message does not name $1: $(cat "$tmp/err")"
}
refuse "$cases/syscall" "" --cpus 0                 # recorded without -a: no CPU
refuse "$cases/pipe" - --time 10%                   # a pipe capture's span is 0 .. 0
for bad in "--pids 1,,2" "--tids x" "--cpus 3-1" "--cpus 4096" "--time 5" \
	   "--time 2,1" "--time 1,2,3" "--time 10%/0" "--time 0%-120%"; do
	read -r -a ba <<< "$bad"
	refuse "$cases/system" "" "${ba[@]}"
done

# nothing kept
kf_case "$cases/system"
"$kfold" "${KF_CASE[@]}" --comms nosuch "$d" > "$tmp/none" 2> "$tmp/none.err" ||
	no "--comms nosuch: exit $?"
[ -s "$tmp/none" ] && no "--comms nosuch wrote stacks"
grep -q "the filters left out all" "$tmp/none.err" || no "--comms nosuch: no warning"

[ "$fail" = 0 ] && echo "filters: ok"
exit $fail
