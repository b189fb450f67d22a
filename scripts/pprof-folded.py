#!/usr/bin/env python3
"""pprof-folded.py: a pprof profile as folded stacks, through go tool pprof.

usage: pprof-folded.py [--samples] PROFILE

Runs `go tool pprof -raw` (Debian's golang-go) on PROFILE, with no
symbolization (so nothing of this machine names a frame), and prints one
folded line per sample: "comm-pid/tid;outermost;...;leaf VALUE", with the
locations' lines outermost first (the root: the comm label alone where
the profile has no pid, none without comm), VALUE the default sample type's value
(the event's period), or the first one's (samples) with --samples.  kfold's
tests compare it with `kfold --tid` on the same capture: an independent
reader of the profile must see the stacks and totals kfold folds.
$KF_PPROF names the pprof program (default: the go tool's).
The profile keeps names as they are; folded text follows stackcollapse's
rules for them, which this applies too: ';' in a name becomes ':', quotes
go, and a comm's spaces become '_'.
"""
import os
import re
import subprocess
import sys


def pprof_tool():
    if os.environ.get("KF_PPROF"):
        return os.environ["KF_PPROF"]
    tooldir = subprocess.run(["go", "env", "GOTOOLDIR"], check=True,
                             capture_output=True, text=True).stdout.strip()
    return os.path.join(tooldir, "pprof")


def main():
    args = sys.argv[1:]
    samples = False
    if args and args[0] == "--samples":
        samples = True
        args = args[1:]
    if len(args) != 1:
        sys.exit("usage: pprof-folded.py [--samples] PROFILE")
    env = dict(os.environ, PPROF_TMPDIR=os.environ.get("TMPDIR", "/tmp"))
    out = subprocess.run([pprof_tool(), "-symbolize=none", "-raw", args[0]],
                         check=True, capture_output=True, text=True, env=env).stdout
    lines = out.split("\n")
    i = lines.index("Samples:")
    types = lines[i + 1].split()
    col = 0 if samples else next(k for k, t in enumerate(types) if t.endswith("[dflt]")) \
        if any(t.endswith("[dflt]") for t in types) else 0
    sample_re = re.compile(r"^\s+([\d ]+): ((?:\d+ )*)$")
    recs = []
    i += 2
    while i < len(lines) and lines[i].strip() and not lines[i].startswith("Locations"):
        m = sample_re.match(lines[i])
        if not m:
            sys.exit("pprof-folded: unexpected sample line %r" % lines[i])
        values = [int(v) for v in m.group(1).split()]
        locs = [int(v) for v in m.group(2).split()]
        labels = {}
        i += 1
        while i < len(lines) and lines[i].startswith("                ") and ":[" in lines[i]:
            for key, val in re.findall(r"(\w+):\[([^\]]*)\]", lines[i]):
                labels[key] = val
            i += 1
        recs.append((values[col], locs, labels))
    # Locations: "  ID: 0xADDR M=N name file:line s=N[(system name)]", inline callers on
    # the lines after it, innermost first
    while i < len(lines) and lines[i] != "Locations":
        i += 1
    names = {}
    cur = None
    loc_re = re.compile(r"^\s+(\d+): 0x[0-9a-f]+ (?:M=\d+ )?(.*)$")
    for line in lines[i + 1:]:
        if not line.strip() or line.startswith("Mappings"):
            if line.startswith("Mappings"):
                break
            continue
        m = loc_re.match(line)
        rest = m.group(2) if m else line.strip()
        if m:
            cur = int(m.group(1))
            names[cur] = []
        # "name file:line s=N" or "... s=N(system name)" where that
        # differs from the name: the name may hold spaces, the file, the
        # s= and a system name (mangled) do not
        m = re.match(r"^(.*) \S*:\d+ s=\d+(?:\(\S*\))?$", rest)
        name = m.group(1) if m else rest
        names[cur].append(name.replace(";", ":").replace('"', "").replace("'", ""))
    folded = {}
    for value, locs, labels in recs:
        # the root: comm-pid/tid as kfold --tid prints it; comm alone
        # where the profile has no pid (kfold merge); none without comm
        comm = labels.get("comm", "").replace(" ", "_")
        if "pid" in labels:
            frames = ["%s-%s/%s" % (comm, labels["pid"], labels.get("tid", ""))]
        else:
            frames = [comm] if "comm" in labels else []
        for loc in reversed(locs):
            frames.extend(reversed(names[loc]))
        key = ";".join(frames)
        folded[key] = folded.get(key, 0) + value
    # one line per stack, in byte order, as folded output is
    for key in sorted(folded, key=lambda k: k.encode()):
        print("%s %d" % (key, folded[key]))


main()
