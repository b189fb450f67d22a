#!/usr/bin/env bash
# lbr.sh KFOLD SRCDIR: call stacks from the LBR (perf record --call-graph
# lbr; issue 17, part 1).
#
# This machine's VM has no PMU, so no LBR: scripts/make-lbr-capture.py
# turns committed frame-pointer captures into the captures `perf record
# --call-graph lbr` would have written for the same samples (the branch
# records are the calls the frame-pointer chains show).  Shown:
#  1. on each, kfold folds the LBR capture byte for byte as the
#     frame-pointer one (default options: inline frames, the sampled pc as
#     the innermost frame);
#  2. kfold --no-inline equals perf script --no-inline | collapse on the
#     LBR capture, with the whole chain or only the pc in the callchain's
#     user part, with an LBR of 8 and of 3 entries, with branch flags;
#     samples without any branch record are left out there (perf 6.1
#     reads an entry past such a sample's record);
#  3. --stats and the report count the LBR samples, those as deep as the
#     LBR (the depth from CPU_PMU_CAPS "branches", as perf records it)
#     equal to the writer's count, and those without records;
#  4. with branch flags, the report's branches (records, mispredicted,
#     predicted, cycles per branch site) equal what perf script -F
#     brstacksym prints of the same records;
#  5. kfold annotate's cycles per basic block (perf's Cycles and IPC
#     columns) on `perf record -g -b`-style captures (make-lbr-capture.py
#     --blocks) equal perf annotate's rules applied to the records perf
#     script prints (src/tests/bbcycles.py: perf 6.1's own annotate
#     --stdio2 crashes on such records), in the JSON and in the text.
set -euo pipefail
kfold=$1
src=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$src/src/tests/lib.sh"
kf_hermetic "$tmp"
mk=$src/scripts/make-lbr-capture.py
fail=0
have_perf=1
command -v perf > /dev/null || { have_perf=0; echo "SKIP 2: perf not found"; }

# captures whose frame-pointer folding kfold and perf agree on
for name in threads syscall forkexec twoevents; do
	d=$src/testdata/cases/$name
	kf_case "$d"
	sf=$(kf_symfs "$d")
	python3 "$mk" "$d/perf.data" "$tmp/l.data" 2> "$tmp/mk.err"
	"$kfold" "${KF_CASE[@]}" "$d/perf.data" > "$tmp/fp.folded" 2> /dev/null
	"$kfold" "${KF_CASE[@]}" "$tmp/l.data" > "$tmp/lbr.folded" 2> /dev/null
	if [ -s "$tmp/fp.folded" ] && cmp -s "$tmp/fp.folded" "$tmp/lbr.folded"; then
		echo "ok   1. $name: the LBR capture folds as the frame-pointer one" \
			"($(wc -l < "$tmp/fp.folded") stacks)"
	else
		echo "FAIL 1. $name: the LBR capture folds otherwise"
		diff "$tmp/fp.folded" "$tmp/lbr.folded" | head -5; fail=1
	fi
	[ $have_perf = 1 ] || continue
	for v in "" "--pc-only" "--depth 8 --caps 8" "--depth 3" "--flags --depth 2 --pc-only"; do
		# shellcheck disable=SC2086
		python3 "$mk" --drop-empty $v "$d/perf.data" "$tmp/v.data" 2> /dev/null
		kf_perf_script "$tmp" "$tmp/v.data" "$sf" 2> /dev/null |
			python3 "$src/scripts/collapse-perf.py" | sort > "$tmp/want"
		"$kfold" --no-inline "${KF_CASE[@]}" "$tmp/v.data" 2> /dev/null | sort > "$tmp/got"
		if [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got"; then
			echo "ok   2. $name ${v:-(whole chain)}: equal to perf script" \
				"($(wc -l < "$tmp/want") stacks)"
		else
			echo "FAIL 2. $name ${v:-(whole chain)}: differs from perf script"
			diff "$tmp/want" "$tmp/got" | head -5; fail=1
		fi
	done
done

# 3. the counts, on threads: an LBR of 3 entries with its depth recorded
d=$src/testdata/cases/threads
kf_case "$d"
python3 "$mk" --depth 3 --caps 3 "$d/perf.data" "$tmp/c.data" 2> "$tmp/mk.err"
read -r _ samples _ empty _ deep < "$tmp/mk.err"
"$kfold" --stats "${KF_CASE[@]}" "$tmp/c.data" 2>&1 > /dev/null | tee "$tmp/stats.all" |
	grep 'LBR call stacks' > "$tmp/stats" || true
want="kfold: LBR call stacks: $samples samples, $deep as deep as the LBR (3 entries: their outer callers are lost), $empty without branch records (the sampled pc alone)"
if [ "$deep" -gt 0 ] && [ "$(cat "$tmp/stats")" = "$want" ]; then
	echo "ok   3. --stats: $samples samples, $deep as deep as the LBR, $empty empty"
else
	echo "FAIL 3. --stats: $(cat "$tmp/stats"), want: $want"; fail=1
fi
if grep -Eq "^kfold: +$deep  lbr_full: the LBR holds only the newest calls" "$tmp/stats.all"; then
	echo "ok   3. --stats: the unwind-stop reason lbr_full, $deep samples"
else
	echo "FAIL 3. --stats: no lbr_full line for $deep samples"; fail=1
fi
"$kfold" report "${KF_CASE[@]}" "$tmp/c.data" 2> /dev/null > "$tmp/c.json"
if python3 - "$tmp/c.json" "$samples" "$deep" "$empty" <<'PY'
import json, sys
l = json.load(open(sys.argv[1]))['diagnostics']['unwinding']['lbr']
stopped = [(s['reason'], s['module'], s['samples']) for s in l.pop('stopped')]
want = {'samples': int(sys.argv[2]), 'full': int(sys.argv[3]), 'empty': int(sys.argv[4]),
        'depth': 3, 'stitched': 0, 'stitched_frames': 0}
# without --stitch-lbr every full stack stopped there
sys.exit(0 if l == want and stopped == [('lbr_full', '', int(sys.argv[3]))] else 1)
PY
then
	echo "ok   3. the report's diagnostics.unwinding.lbr, with the stop reason lbr_full"
else
	echo "FAIL 3. the report's diagnostics.unwinding.lbr"; fail=1
fi
python3 "$mk" --depth 3 "$d/perf.data" "$tmp/n.data" 2> /dev/null
if "$kfold" --stats "${KF_CASE[@]}" "$tmp/n.data" 2>&1 > /dev/null |
	grep -q "LBR call stacks: $samples samples (the LBR's depth is not recorded"; then
	echo "ok   3. without CPU_PMU_CAPS: the depth is not known, said so"
else
	echo "FAIL 3. without CPU_PMU_CAPS"; fail=1
fi

# 4. branch sites: the report against perf script -F brstacksym
if [ $have_perf = 1 ]; then
	d=$src/testdata/cases/syscall
	kf_case "$d"
	python3 "$mk" --flags --depth 3 "$d/perf.data" "$tmp/f.data" 2> /dev/null
	kf_perf_script "$tmp" "$tmp/f.data" "$(kf_symfs "$d")" -F brstacksym \
		> "$tmp/brs.txt" 2> /dev/null
	"$kfold" report "${KF_CASE[@]}" "$tmp/f.data" 2> /dev/null > "$tmp/f.json"
	python3 - "$tmp/brs.txt" "$tmp/f.json" <<'PY' || fail=1
import collections, json, sys
# perf: FROM/TO/M-or-P/in_tx/abort/cycles/type per record
want = collections.defaultdict(lambda: [0, 0, 0, 0])
tot = [0, 0, 0]
for line in open(sys.argv[1]):
    for rec in line.split():
        f = rec.split('/')
        if len(f) < 6:
            continue
        w = want[f[0]]
        w[0] += 1
        w[1] += f[2] == 'M'
        w[2] += f[2] == 'P'
        w[3] += int(f[5])
        tot[0] += 1
        tot[1] += f[2] == 'M'
        tot[2] += f[2] == 'P'
b = json.load(open(sys.argv[2]))['branches']
got = {}
for st in b['sites']:
    if st['function']:
        got['%s+%#x' % (st['function'], st['offset'])] = [
            st['records'], st['mispredicted'], st['predicted'], st['cycles']]
named = {k: v for k, v in want.items() if not k.startswith('[unknown]')}
ok = (got == named and [b['records'], b['mispredicted'], b['predicted']] == tot and
      b['n_sites'] == len(b['sites']) and tot[1] > 0)
print('%s 4. branch sites: %d records, %d mispredicted, %d sites named as perf '
      'script -F brstacksym counts them' % ('ok  ' if ok else 'FAIL', tot[0], tot[1],
                                              len(got)))
if not ok:
    print('   perf:', sorted(named.items())[:4], tot)
    print('   kfold:', sorted(got.items())[:4], b['records'], b['mispredicted'])
sys.exit(0 if ok else 1)
PY
fi
if python3 -c 'import jsonschema' 2> /dev/null; then
	if python3 - "$src/docs/kfold-report.schema.json" "$tmp/c.json" "$tmp/f.json" <<'PY'
import json, os, sys, jsonschema
schema = json.load(open(sys.argv[1]))
for p in sys.argv[2:]:
    if os.path.exists(p):
        jsonschema.validate(json.load(open(p)), schema)
PY
	then
		echo "ok   4. the reports with lbr and branches validate against the schema"
	else
		echo "FAIL 4. schema"; fail=1
	fi
fi

# 5. cycles per basic block
if [ $have_perf = 1 ]; then
	for name in threads syscall forkexec twoevents; do
		d=$src/testdata/cases/$name
		kf_case "$d"
		python3 "$mk" --blocks "$d/perf.data" "$tmp/b.data" 2> /dev/null
		kf_perf_script "$tmp" "$tmp/b.data" "$(kf_symfs "$d")" -F event,brstacksym \
			> "$tmp/b.brs" 2> /dev/null
		"$kfold" annotate --format json --top 0 "${KF_CASE[@]}" "$tmp/b.data" \
			> "$tmp/b-$name.json" 2> /dev/null
		printf '%s: ' "$name"
		python3 "$src/src/tests/bbcycles.py" "$tmp/b.brs" "$tmp/b-$name.json" || fail=1
	done
	# the text's IPC and cycles columns say what the JSON says
	d=$src/testdata/cases/threads
	kf_case "$d"
	python3 "$mk" --blocks "$d/perf.data" "$tmp/b.data" 2> /dev/null
	"$kfold" annotate --symbol alpha_outer --symbol alpha_thread "${KF_CASE[@]}" \
		"$tmp/b.data" > "$tmp/b.txt" 2> /dev/null
	if python3 - "$tmp/b.txt" "$tmp/b-threads.json" <<'PY'
import json, re, sys
fs = {f['symbol']: f for f in json.load(open(sys.argv[2]))['functions']}
cur, seen, ok = None, 0, True
for line in open(sys.argv[1]):
    m = re.match(r'^(\S+)  \[', line)
    if m:
        cur = fs[m.group(1)]
        ins = {int(i['addr'], 16): i for i in cur['instructions']}
        continue
    m = re.match(r'^ {0,8}\d+ {2}.{7}(.{7})(.{8}) +([0-9a-f]+):  ', line)
    if not m or cur is None:
        continue
    i = ins[int(m.group(3), 16)]
    ipc = m.group(1).strip()
    cyc = m.group(2).strip()
    want_ipc = '%.2f' % i['ipc'] if 'ipc' in i else ''
    b = i.get('block_cycles')
    want_cyc = str(b['cycles'] // b['records']) if b else ''
    ok &= ipc == want_ipc and cyc == want_cyc
    seen += bool(ipc or cyc)
print('%s 5. the text: %d instructions with an IPC or cycles, as the JSON gives them' %
      ('ok  ' if ok and seen else 'FAIL', seen))
sys.exit(0 if ok and seen else 1)
PY
	then :; else fail=1; fi
	# perf's own columns, when it gets that far (perf 6.1 crashes)
	( cd "$tmp" && HOME=$tmp/home PERF_CONFIG=/dev/null perf --buildid-dir "$KF_NOCACHE" \
		annotate -i "$tmp/b.data" --symfs "$(kf_symfs "$d")" --stdio2; exit $? ) \
		> /dev/null 2>&1 && rc=0 || rc=$?
	echo "note 5. perf annotate --stdio2 on the same capture: exit status $rc"
	if python3 -c 'import jsonschema' 2> /dev/null; then
		if python3 - "$src/docs/kfold-annotate.schema.json" "$tmp"/b-*.json <<'PY'
import json, sys, jsonschema
schema = json.load(open(sys.argv[1]))
for p in sys.argv[2:]:
    jsonschema.validate(json.load(open(p)), schema)
PY
		then
			echo "ok   5. the annotations with block cycles validate against the schema"
		else
			echo "FAIL 5. schema"; fail=1
		fi
	fi
fi
exit $fail
