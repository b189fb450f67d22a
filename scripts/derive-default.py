#!/usr/bin/env python3
"""Derive kfold's expected default-mode output from the perf oracle.

kfold's default output must equal `perf script | stackcollapse-perf.pl`
except for the corrections documented in the README ("Where kfold differs
from perf").  Each case lists the corrections its capture shows in
CASE/corrections, one rule per line, each checked by hand (the comment above
a rule says how):

    replace <TAB> OLD <TAB> NEW   replace the text OLD by NEW in every stack
    source <TAB> FILE             start from CASE/FILE instead of
                                  expected.folded (e.g. a fold made by
                                  scripts/fold-oneline.py)

Rules apply in order to the stack part of every line; equal stacks are then
merged and the output is sorted like stackcollapse-perf.pl's.

usage: scripts/derive-default.py CASE_DIR > expected-default.folded
"""
import os
import sys


def main(argv):
    if len(argv) != 1:
        sys.stderr.write(__doc__)
        return 2
    case = argv[0]
    source = "expected.folded"
    rules = []
    path = os.path.join(case, "corrections")
    if os.path.exists(path):
        with open(path, "rb") as f:
            for n, raw in enumerate(f, 1):
                line = raw.rstrip(b"\n")
                if not line or line.startswith(b"#"):
                    continue
                parts = line.split(b"\t")
                if parts[0] == b"replace" and len(parts) == 3:
                    rules.append((parts[1], parts[2]))
                elif parts[0] == b"source" and len(parts) == 2:
                    source = parts[1].decode()
                else:
                    sys.stderr.write("%s:%d: bad rule\n" % (path, n))
                    return 2
    folded = {}
    with open(os.path.join(case, source), "rb") as f:
        for raw in f:
            stack, _, count = raw.rstrip(b"\n").rpartition(b" ")
            for old, new in rules:
                stack = stack.replace(old, new)
            folded[stack] = folded.get(stack, 0) + int(count)
    out = sys.stdout.buffer
    for stack in sorted(folded):
        out.write(stack + b" " + str(folded[stack]).encode() + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
