#!/usr/bin/env python3
# stitch-counts.py - what kfold --stitch says it did, for the stitch tests
# (src/tests/stitch.sh, src/tests/stitch-live.sh).  Python 3 standard
# library.
#
# USAGE
#   stitch-counts.py STATS [REPORT]
#
# STATS is kfold's standard error with --stats --stitch; its line
#   kfold: --stitch: C samples ran out of the stack copy, S completed from
#   earlier samples (F frames), K still cut
# is printed back as "C S F K".  With REPORT (kfold report --stitch of the
# same capture and options), its diagnostics.unwinding.dwarf.stitch must
# hold the same four numbers and some object of its frame_table must say
# "stitched".  Exit status: 0 ok, 1 a check failed (message on stderr).
import json
import re
import sys

LINE = re.compile(r'^kfold: --stitch: (\d+) samples ran out of the stack copy, '
                  r'(\d+) completed from earlier samples \((\d+) frames\), '
                  r'(\d+) still cut$', re.M)


def main():
    text = open(sys.argv[1]).read()
    m = LINE.search(text)
    if not m:
        sys.exit('FAIL: --stats says nothing of --stitch:\n' + text)
    counts = [int(x) for x in m.groups()]
    if len(sys.argv) > 2:
        d = json.load(open(sys.argv[2]))
        st = d['diagnostics']['unwinding']['dwarf'].get('stitch')
        want = dict(zip(('cut', 'stitched', 'frames', 'still_cut'), counts))
        if st != want:
            sys.exit('FAIL: the report says %s, --stats %s' % (st, want))
        if not any(f.get('stitched') for f in d['frame_table']):
            sys.exit('FAIL: no frame of the report is marked stitched')
    print(*counts)


main()
