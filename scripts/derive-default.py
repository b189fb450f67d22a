#!/usr/bin/env python3
"""Derive kfold's expected default-mode output from the perf oracle.

kfold's default output must equal `perf script | stackcollapse-perf.pl`
except for the corrections documented in the README ("Where kfold differs
from perf").  Each case lists the corrections its capture shows in
CASE/corrections, one rule per line, each checked by hand (the comment above
a rule says how):

    replace <TAB> OLD <TAB> NEW   replace the text OLD by NEW in every stack
    resub <TAB> REGEX <TAB> NEW   the same with a Python regular expression
    source <TAB> FILE             start from CASE/FILE instead of
                                  expected.folded (e.g. a fold made by
                                  scripts/fold-oneline.py)
    trailing-zero                 start from CASE/expected.addrs.folded
                                  (the oracle with --addrs, so a zero entry
                                  reads "[unknown <0>]"), drop the zero
                                  entries at the root end of each stack,
                                  then drop the addresses: kfold's rule
                                  that the 0 ending a user walk is no frame;
                                  and a root-end "[unknown <ffffffffffffffff>]"
                                  (perf's frame where the copy of the user
                                  stack ran out: 0 - 1) becomes "[truncated]"

Rules apply in order to the stack part of every line; equal stacks are then
merged and the output is sorted like stackcollapse-perf.pl's.

A variant (a set of options, CASE/variants) starts from
CASE/expected.VARIANT.folded and adds the rules of CASE/corrections.VARIANT.

usage: scripts/derive-default.py CASE_DIR [VARIANT] > expected-default.folded
"""
import os
import re
import sys

ADDR = re.compile(rb" <[0-9a-f]+>\]")


def main(argv):
    if len(argv) not in (1, 2):
        sys.stderr.write(__doc__)
        return 2
    case = argv[0]
    variant = argv[1] if len(argv) == 2 else None
    source = "expected.%s.folded" % variant if variant else "expected.folded"
    rules = []
    trailing_zero = False
    files = [os.path.join(case, "corrections")]
    if variant:
        files.append(os.path.join(case, "corrections." + variant))
    for path in files:
        if not os.path.exists(path):
            continue
        with open(path, "rb") as f:
            for n, raw in enumerate(f, 1):
                line = raw.rstrip(b"\n")
                if not line or line.startswith(b"#"):
                    continue
                parts = line.split(b"\t")
                if parts[0] == b"replace" and len(parts) == 3:
                    rules.append((parts[1], parts[2]))
                elif parts[0] == b"resub" and len(parts) == 3:
                    rules.append((re.compile(parts[1]), parts[2]))
                elif parts[0] == b"trailing-zero" and len(parts) == 1:
                    if variant in (None, "addrs"):
                        source = "expected.addrs.folded"
                        trailing_zero = True
                elif parts[0] == b"no-oracle":
                    sys.stderr.write("%s: no oracle for the default mode\n" % case)
                    return 3
                elif parts[0] == b"source" and len(parts) == 2:
                    if not variant:
                        source = parts[1].decode()
                else:
                    sys.stderr.write("%s:%d: bad rule\n" % (path, n))
                    return 2
    folded = {}
    with open(os.path.join(case, source), "rb") as f:
        for raw in f:
            stack, _, count = raw.rstrip(b"\n").rpartition(b" ")
            if trailing_zero:
                frames = stack.split(b";")
                while len(frames) > 1 and frames[1] == b"[unknown <0>]":
                    del frames[1]
                if len(frames) > 1 and frames[1] == b"[unknown <ffffffffffffffff>]":
                    frames[1] = b"[truncated]"
                stack = b";".join(frames)
                if variant != "addrs":
                    stack = ADDR.sub(b"]", stack)
            for old, new in rules:
                if isinstance(old, bytes):
                    stack = stack.replace(old, new)
                else:
                    stack = old.sub(new, stack)
            folded[stack] = folded.get(stack, 0) + int(count)
    out = sys.stdout.buffer
    for stack in sorted(folded):
        out.write(stack + b" " + str(folded[stack]).encode() + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
