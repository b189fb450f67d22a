#!/usr/bin/env python3
"""Fold `perf script` output of a capture WITHOUT callchains (one line per
sample) into "comm;symbol PERIOD" stacks.

stackcollapse-perf.pl folds nothing from such output (its header pattern
needs the comm at the start of the line, and perf right-aligns it), so this
is the oracle for kfold's default mode on no-callchain captures: the sample's
own symbol as perf script names it, tidied with stackcollapse's name rules,
weighted by the period perf prints.  Standard library only.

Usage: perf script ... | scripts/fold-oneline.py > out.folded
"""
import re
import sys

# "%16s %5d [%03d] %12s: %10lu %*s: %16lx SYM (DSO)"; cpu is optional.
LINE = re.compile(rb"^\s*(.*?)\s+(\d+)\s+(?:\[\d+\]\s+)?(\d+\.\d{6}):\s+(\d+)\s+"
                  rb"(\S+):\s+([0-9a-f]+) (.*) \((.*)\)$")
OFFSET = re.compile(rb"\+0x[0-9a-f]+$")
PARENS = re.compile(rb"\((?!anonymous namespace\)).*")
GO = re.compile(rb"\.\(.*\)\.")


def name(sym, dso):
    sym = OFFSET.sub(b"", sym, count=1)
    if sym == b"[unknown]":
        if dso == b"[unknown]":
            return b"[unknown]"
        return b"[" + dso.rsplit(b"/", 1)[-1].replace(b";", b":") + b"]"
    sym = sym.replace(b";", b":")
    if not GO.search(sym):
        sym = PARENS.sub(b"", sym, count=1)
    return sym.replace(b'"', b"").replace(b"'", b"")


def main():
    folded = {}
    event = None
    for raw in sys.stdin.buffer:
        line = raw.rstrip(b"\n")
        if not line or line.startswith(b"#"):
            continue
        m = LINE.match(line)
        if not m:
            sys.stderr.write("fold-oneline: unrecognized line: %r\n" % line)
            return 1
        comm, _tid, _time, period, ev, _ip, sym, dso = m.groups()
        if event is None:
            event = ev
        elif ev != event:
            continue
        key = comm.replace(b" ", b"_") + b";" + name(sym, dso)
        folded[key] = folded.get(key, 0) + (int(period) or 1)
    out = sys.stdout.buffer
    for key in sorted(folded):
        out.write(key + b" " + str(folded[key]).encode() + b"\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
