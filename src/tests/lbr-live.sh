#!/usr/bin/env bash
# lbr-live.sh KFOLD SRC: --stitch-lbr (issue 17, part 1), on a capture
# recorded now.
# testdata/src/stitch/stitch.c (a recursion whose depth rises and falls
# slowly), built with frame pointers and recorded with -g, is turned into
# the capture --call-graph lbr would have given with an LBR of 8 entries
# (scripts/make-lbr-capture.py: the branch records are the calls of each
# frame-pointer chain, the 8 newest kept, in a ring of 8 registers; the
# samples that made no call are left out: perf reads past their records).
# Shown:
#  1. kfold --stitch-lbr --no-inline equals perf script --stitch-lbr on
#     it, and stitches (--stats: samples completed, frames taken);
#  2. perf's stitching is a guess from the records alone: per sample (perf
#     script), stitched stacks that equal the frame-pointer truth exist,
#     and the count of those that do not (a recursion's calls all look
#     alike, so a deeper previous sample can match) is printed;
#  3. without --stitch-lbr, kfold equals perf script without it.
set -uo pipefail
kfold=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$src/src/tests/live-lib.sh"
live_need perf gcc python3

gcc -O1 -g -fno-omit-frame-pointer -o "$tmp/stitch" "$src/testdata/src/stitch/stitch.c" || exit 1
perf record -N -e cpu-clock -F 1000 -g -o "$tmp/fp" -- "$tmp/stitch" 0.4 \
	> "$tmp/record.log" 2>&1 || skip "perf record -g failed: $(tail -1 "$tmp/record.log")"
python3 "$src/scripts/make-lbr-capture.py" --drop-empty --depth 8 --caps 8 "$tmp/fp" "$tmp/lbr" \
	2> "$tmp/mk.log" || { echo "FAIL: make-lbr-capture.py: $(cat "$tmp/mk.log")"; exit 1; }
fail=0
# a sample in the vDSO (stitch.c reads the clock): perf without its build-id
# cache prints [[vdso]], kfold names it from its own copy; the same frame
vdso() { sed -e 's/;\[\[vdso\]\]/;VDSO/g' -e 's/;__vdso_[A-Za-z_]*/;VDSO/g' | sort; }
collapse() { python3 "$src/scripts/collapse-perf.py" | vdso; }

perf script -i "$tmp/lbr" --no-inline --stitch-lbr 2> /dev/null | collapse > "$tmp/want"
"$kfold" --no-inline --stitch-lbr "$tmp/lbr" 2> /dev/null | vdso > "$tmp/got"
"$kfold" --stats --no-inline --stitch-lbr "$tmp/lbr" 2>&1 > /dev/null |
	sed -n 's/^kfold: --stitch-lbr: \([0-9]*\) samples.*(\([0-9]*\) frames).*/\1 \2/p' > "$tmp/st"
read -r ns nf < "$tmp/st" || { ns=0; nf=0; }
if [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got" && [ "$ns" -gt 0 ] && [ "$nf" -gt 0 ]; then
	echo "ok   1. --stitch-lbr equals perf script --stitch-lbr ($(wc -l < "$tmp/want")" \
		"stacks; $ns samples stitched, $nf frames)"
else
	echo "FAIL 1. --stitch-lbr differs from perf's (or stitched nothing: $ns, $nf)"
	diff "$tmp/want" "$tmp/got" | head -5; fail=1
fi
# the unwind-stop reason lbr_full: every full stack without --stitch-lbr,
# fewer with it (those it completed no longer stop there)
"$kfold" report "$tmp/lbr" > "$tmp/r0.json" 2> /dev/null
"$kfold" report --stitch-lbr "$tmp/lbr" > "$tmp/r1.json" 2> /dev/null
python3 - "$tmp/r0.json" "$tmp/r1.json" <<'PY' || fail=1
import json, sys
def lbr(p):
    l = json.load(open(p))['diagnostics']['unwinding']['lbr']
    st = {s['reason']: s['samples'] for s in l['stopped']}
    return l, st.get('lbr_full', 0)
(l0, s0), (l1, s1) = lbr(sys.argv[1]), lbr(sys.argv[2])
ok = (l0['full'] > 0 and s0 == l0['full'] and l1['full'] == l0['full'] and
      l1['stitched'] > 0 and l0['full'] - l1['stitched'] <= s1 < s0)
print('%s 1. lbr_full: %d of %d full stacks stopped there, %d with --stitch-lbr (%d '
      'stitched)' % ('ok  ' if ok else 'FAIL', s0, l0['full'], s1, l1['stitched']))
sys.exit(0 if ok else 1)
PY

perf script -i "$tmp/fp" -F tid,time,ip,sym --no-inline 2> /dev/null > "$tmp/fp.txt"
perf script -i "$tmp/lbr" -F tid,time,ip,sym --no-inline --stitch-lbr 2> /dev/null > "$tmp/lbr.txt"
python3 - "$tmp/fp.txt" "$tmp/lbr.txt" <<'PY' || fail=1
import sys
import re
HEAD = re.compile(r'^\s*(\d+)\s+([\d.]+):')
def blocks(path):
    out, cur = {}, None
    for line in open(path):
        line = line.rstrip('\n')
        m = HEAD.match(line)
        if not line.strip():
            cur = None
        elif m:
            cur = m.groups()
            out[cur] = []
        elif cur is not None:
            f = line.split()
            out[cur].append(f[1] if len(f) > 1 else '?')
    return out
fp, lbr = blocks(sys.argv[1]), blocks(sys.argv[2])
whole = wrong = 0
for k, fr in lbr.items():
    # stitched: more callers than an LBR of 8 holds
    if len(fr) <= 9 or k not in fp:
        continue
    if fr == fp[k]:
        whole += 1
    elif fr != fp[k][:len(fr)]:
        wrong += 1
print('%s 2. perf --stitch-lbr per sample: %d stitched stacks equal the frame-pointer '
      'ones, %d do not (joined to a deeper previous sample)' %
      ('ok  ' if whole else 'FAIL', whole, wrong))
sys.exit(0 if whole else 1)
PY

perf script -i "$tmp/lbr" --no-inline 2> /dev/null | collapse > "$tmp/want0"
"$kfold" --no-inline "$tmp/lbr" 2> /dev/null | vdso > "$tmp/got0"
if [ -s "$tmp/want0" ] && cmp -s "$tmp/want0" "$tmp/got0"; then
	echo "ok   3. without --stitch-lbr: equal to perf script ($(wc -l < "$tmp/want0") stacks)"
else
	echo "FAIL 3. without --stitch-lbr"; diff "$tmp/want0" "$tmp/got0" | head -5; fail=1
fi
exit $fail
