#!/usr/bin/env python3
"""Check `kfold annotate` against `perf annotate` (perf 6.1), sample for sample.

Usage:
    scripts/annotate-oracle.py [options] perf.data -- KFOLD [KFOLD-OPTIONS...]
    scripts/annotate-oracle.py [options] --kfold-json FILE perf.data
    scripts/annotate-oracle.py [options] --perf-only perf.data
    scripts/annotate-oracle.py --selftest

The perf side runs, with an empty perf config and a private HOME,

    perf --buildid-dir EMPTY annotate -i FILE --symfs SYMFS --stdio -n \\
         --no-source --stdio-color never

and reads its text: one section per function, in the order perf sorts
them (samples, descending).  A section starts with

     Samples |<TAB>Source code & Disassembly of DSO for EVENT (N samples, ...)

its first objdump label (`00000000000011d0 <compute_stats>:`, after the
line-number column perf prints even with --no-source) gives the function's
start, and every instruction line (`      10 :   1200:   mov ...`) gives
an ELF virtual address and its sample count.  Lines with an empty count
column (labels, `compute_stats():` inline markers, file:line) are not
instructions.  objdump's continuation lines (the rest of the bytes of an
instruction longer than 7 bytes) only appear with --asm-raw, which is not
used; a line whose text is nothing but hex bytes is still never counted as
an instruction (it is reported as a warning).

perf annotates only the functions it can disassemble: user-space ELF code
found in the symfs.  It says nothing about the others (kernel symbols
without a vmlinux, [vdso], JIT code, addresses without a symbol), so the
oracle also runs `perf report --sort dso,sym` and lists every entry that
got no section as skipped, with its samples.  A second run of the same
annotate command with -v gives, on stderr, perf's own symbol name and the
objdump --start-address/--stop-address of each section (its stdout then
also carries perf's raw per-IP histogram, which is checked against the
instruction counts).

The kfold side runs `KFOLD annotate --format json --top 0 KFOLD-OPTIONS
FILE` (or reads --kfold-json) and takes functions[].instructions[].  It
runs first: its `event` (kfold's default, the first sample's event) picks
perf's sections of that event (perf annotates every event).

Functions are keyed by (dso basename, start address).  For each function
both sides have, the sample count must be equal at every address either
side lists (an address only one side lists is a difference too) and the
function totals must be equal.  Functions only perf annotated are
differences as well, since --top 0 asks kfold for every function with
samples; functions only kfold has (kernel code, [vdso], FDE ranges perf
drops) are listed, not failed.  A function kfold gives without code
(`no_code`: it would not disassemble the range) is compared at the
addresses with samples only, with a note; instructions kfold printed as
`.byte` (not decoded) are noted, since its boundaries after them are not
objdump's.  `--allow FILE` names functions where perf
is documented wrong: lines `DSO-BASENAME START REASON...` ('#' starts a
comment); their differences are printed as allowed and do not fail.

Exit status: 0 equal, 1 a difference, 2 usage or a tool failed.
Only the Python 3 standard library is used.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

# ---------------------------------------------------------------- perf side

HEADER_RE = re.compile(
    r"^\s*Samples\s*\|\s*Source code & Disassembly of (?P<dso>.+?) for "
    r"(?P<event>\S+) \((?P<samples>\d+) samples, percent: [^)]*\)\s*$")
# an instruction: count, address, text
INSN_RE = re.compile(r"^\s*(?P<n>\d+)\s+:\s+(?P<addr>[0-9a-f]+):\s*(?P<text>.*?)\s*$")
# a line with an empty count column: perf's line number, then objdump's text
BLANK_RE = re.compile(r"^\s*:\s*(?:(?P<lineno>\d+)\s+(?P<text>.*?))?\s*$")
LABEL_RE = re.compile(r"^(?P<addr>[0-9a-f]+) <(?P<name>.*)>:$")
# -v only: perf's raw histogram, `  13ea: 22` and `h->nr_samples: 40`
HIST_RE = re.compile(r"^\s+(?P<addr>[0-9a-f]+): (?P<n>\d+)$")
NRSAMPLES_RE = re.compile(r"^\s+h->nr_samples: (?P<n>\d+)$")
RAWBYTES_RE = re.compile(r"^(?:[0-9a-f]{2} )*[0-9a-f]{2}$")
# -v stderr
DISASM_RE = re.compile(
    r"^symbol__disassemble: filename=(?P<file>.*), sym=(?P<sym>.*), "
    r"start=0x[0-9a-f]+, end=0x[0-9a-f]+$")
EXEC_RE = re.compile(
    r"^Executing: \S*objdump\s.*--start-address=0x(?P<start>[0-9a-f]+) "
    r"--stop-address=0x(?P<stop>[0-9a-f]+)")


class Fail(Exception):
    pass


def perf_env(tmp):
    env = dict(os.environ)
    home = os.path.join(tmp, "home")
    os.makedirs(home, exist_ok=True)
    conf = os.path.join(tmp, "perfconfig")
    open(conf, "w").close()
    env.update(HOME=home, PERF_CONFIG=conf, LC_ALL="C")
    env.pop("PERF_BUILDID_DIR", None)
    env.pop("DEBUGINFOD_URLS", None)
    return env


def run(cmd, env=None, what=None):
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise Fail("%s exited %d: %s\n%s" % (
            what or cmd[0], p.returncode, " ".join(cmd),
            p.stderr.decode("utf-8", "replace")[-2000:]))
    return (p.stdout.decode("utf-8", "replace"),
            p.stderr.decode("utf-8", "replace"))


def parse_annotate(text, verbose_hist=False):
    """perf annotate --stdio -n text -> list of sections, in perf's order."""
    sections = []
    cur = None
    warnings = []
    for lineno, line in enumerate(text.splitlines(), 1):
        m = HEADER_RE.match(line)
        if m:
            cur = {"dso": m.group("dso"), "event": m.group("event"),
                   "total": int(m.group("samples")), "start": None,
                   "label": None, "insns": {}, "order": [], "hist": {},
                   "nr_samples": None, "line": lineno}
            sections.append(cur)
            continue
        if cur is None or not line.strip() or re.match(r"^-+$", line):
            continue
        if verbose_hist:
            m = HIST_RE.match(line)
            if m:
                cur["hist"][int(m.group("addr"), 16)] = int(m.group("n"))
                continue
            m = NRSAMPLES_RE.match(line)
            if m:
                cur["nr_samples"] = int(m.group("n"))
                continue
        m = INSN_RE.match(line)
        if m:
            addr = int(m.group("addr"), 16)
            if RAWBYTES_RE.match(m.group("text")):
                warnings.append("line %d: continuation line at 0x%x not "
                                "counted: %s" % (lineno, addr, line.strip()))
                if int(m.group("n")):
                    warnings.append("line %d: ... and it has %s samples" %
                                    (lineno, m.group("n")))
                continue
            if addr in cur["insns"]:
                raise Fail("perf output line %d: address 0x%x twice in one "
                           "function" % (lineno, addr))
            cur["insns"][addr] = int(m.group("n"))
            cur["order"].append(addr)
            continue
        m = BLANK_RE.match(line)
        if m:
            t = m.group("text") or ""
            lm = LABEL_RE.match(t)
            if lm and cur["start"] is None:
                cur["start"] = int(lm.group("addr"), 16)
                cur["label"] = lm.group("name")
            continue
        raise Fail("perf output line %d not understood: %r" % (lineno, line))
    for s in sections:
        if s["start"] is None:
            raise Fail("perf section at line %d has no objdump label" % s["line"])
    return sections, warnings


def parse_verbose_stderr(text):
    """perf annotate -v stderr -> [(file, perf symbol, start, stop)]."""
    out = []
    pending = None
    for line in text.splitlines():
        m = DISASM_RE.match(line)
        if m:
            pending = (m.group("file"), m.group("sym"))
            continue
        m = EXEC_RE.match(line)
        if m and pending:
            out.append((pending[0], pending[1], int(m.group("start"), 16),
                        int(m.group("stop"), 16)))
            pending = None
    return out


def parse_report(text):
    """perf report -n --sort dso,sym -t '|' ->
    [(event, dso, kind, sym, samples)]; one table per event, each after a
    `# Samples: N of event 'NAME'` line."""
    out = []
    event = None
    for line in text.splitlines():
        m = re.match(r"^# Samples: .* of event '(.*)'\s*$", line)
        if m:
            event = m.group(1)
            continue
        if not line.strip() or line.startswith("#"):
            continue
        f = line.split("|", 3)     # a C++ name may hold `|` (operator|)
        if len(f) < 4:
            continue
        sym = f[3].strip()
        m = re.match(r"^\[(.)\] (.*)$", sym)
        kind, name = (m.group(1), m.group(2)) if m else ("?", sym)
        try:
            n = int(f[1].strip())
        except ValueError:
            continue
        out.append((event, f[2].strip(), kind, name, n))
    return out


def same_event(a, b):
    """perf's and kfold's name of one event (cpu-clock:u and cpu-clock)"""
    return a == b or a.split(":")[0] == b.split(":")[0]


def perf_side(args, tmp, event=None):
    """perf's functions of EVENT (all events when None)."""
    perf = args.perf
    env = perf_env(tmp)
    cache = os.path.join(tmp, "buildid")
    os.makedirs(cache, exist_ok=True)
    base = [perf, "--buildid-dir", cache, "annotate", "-i", args.file]
    if args.symfs:
        base += ["--symfs", args.symfs]
    opts = ["--stdio", "-n", "--no-source", "--stdio-color", "never"]
    text, _ = run(base + opts, env, "perf annotate")
    sections, warnings = parse_annotate(text)
    vtext, verr = run(base + opts + ["-v"], env, "perf annotate -v")
    vsections, _ = parse_annotate(vtext, verbose_hist=True)
    meta = parse_verbose_stderr(verr)
    all_events = {s["event"] for s in sections}
    if event is not None:
        sections = [s for s in sections if same_event(s["event"], event)]
        vsections = [s for s in vsections if same_event(s["event"], event)]

    # functions with equal samples come in no fixed order: match by key
    vbykey = {(s["dso"], s["start"]): s for s in vsections}
    if sorted((s["dso"], s["start"], sorted(s["insns"].items()))
              for s in sections) != \
            sorted((s["dso"], s["start"], sorted(s["insns"].items()))
                   for s in vsections):
        raise Fail("perf annotate -v printed other functions or counts than "
                   "without -v")
    funcs = {}
    events = set()
    for s in sections:
        vs = vbykey[(s["dso"], s["start"])]
        key = (s["dso"], s["start"])
        if key in funcs:
            raise Fail("perf annotated %s 0x%x twice for one event" % key)
        events.add(s["event"])
        f = {"symbol": s["label"], "label": s["label"], "total": s["total"],
             "insns": s["insns"], "event": s["event"], "stop": None,
             "file": None}
        for (fname, sym, start, stop) in meta:
            if os.path.basename(fname) == s["dso"] and start == s["start"]:
                f.update(symbol=sym, stop=stop, file=fname)
                break
        else:
            # a debug file or cache copy can carry another name: match the
            # start alone when it is unique
            cands = [m for m in meta if m[2] == s["start"]]
            if len(cands) == 1:
                f.update(symbol=cands[0][1], stop=cands[0][3], file=cands[0][0])
        # perf's own consistency: its raw histogram, the header's total and
        # the sum of the instruction lines
        isum = sum(s["insns"].values())
        if isum != s["total"]:
            warnings.append("perf %s %s 0x%x: header says %d samples, its "
                            "instruction lines add up to %d" %
                            (s["dso"], f["symbol"], s["start"], s["total"], isum))
        if vs["nr_samples"] is not None and vs["nr_samples"] != s["total"]:
            warnings.append("perf %s %s: h->nr_samples %d, header %d" %
                            (s["dso"], f["symbol"], vs["nr_samples"], s["total"]))
        # (its addresses are perf's map-relative ones: file offsets, not
        # the ELF addresses of the instruction lines)
        if vs["hist"]:
            hsum = sum(vs["hist"].values())
            if hsum != isum:
                warnings.append("perf %s %s: raw histogram has %d samples, "
                                "the instruction lines %d" %
                                (s["dso"], f["symbol"], hsum, isum))
        f["hist"] = vs["hist"]
        funcs[key] = f

    # what perf did not annotate: every report entry without a section
    rep_cmd = [perf, "--buildid-dir", cache, "report", "-i", args.file,
               "--stdio", "-n", "--sort", "dso,sym", "--no-children",
               "-g", "none", "-t", "|"]
    if args.symfs:
        rep_cmd += ["--symfs", args.symfs]
    if args.kallsyms:
        rep_cmd += ["--kallsyms", args.kallsyms]
    rtext, _ = run(rep_cmd, env, "perf report")
    report = [(d, k, n, c) for (ev, d, k, n, c) in parse_report(rtext)
              if event is None or ev is None or same_event(ev, event)]
    # a report entry is an annotated function of its module with the same
    # name, or (perf report prints C++ names without their parameters) the
    # annotated name is that name followed by `(`
    left = set(funcs)
    skipped = []

    def take(dso, name, n):
        for exact in (True, False):
            for k in sorted(left):
                sym = funcs[k]["symbol"] or ""
                if k[0] != dso or not (sym == name if exact else
                                       sym.startswith(name + "(")):
                    continue
                left.discard(k)
                if funcs[k]["total"] != n:
                    warnings.append("perf report gives %s %s %d samples, perf "
                                    "annotate %d" % (dso, name, n, funcs[k]["total"]))
                return True
        return False

    rest = [e for e in report if not take(e[0], e[2], e[3])]
    # names perf report prints otherwise still (C++ return types, template
    # arguments, `[clone .isra.0]`): a function of the module with the
    # same samples
    for (dso, kind, name, n) in rest:
        same = [k for k in sorted(left) if k[0] == dso and funcs[k]["total"] == n]
        if same and kind != "k":
            left.discard(same[0])
            continue
        skipped.append({"dso": dso, "kind": kind, "symbol": name, "samples": n,
                        "reason": skip_reason(dso, kind, name)})
    for k in sorted(left):
        warnings.append("perf annotated %s 0x%x (%s), which perf report "
                        "does not list" % (k[0], k[1], funcs[k]["symbol"]))
    return {"functions": funcs, "skipped": skipped, "events": events,
            "all_events": all_events, "warnings": warnings}


def skip_reason(dso, kind, name):
    if kind == "k" or dso.startswith("[kernel") or dso.endswith(".ko"):
        return "kernel (no vmlinux)"
    if dso.startswith("[JIT]") or (dso.startswith("perf-") and dso.endswith(".map")):
        return "JIT (no code)"
    if dso == "[vdso]":
        return "vdso (no file)"
    if re.match(r"^0x[0-9a-f]+$", name):
        return "no symbol"
    if dso == "[unknown]":
        return "no map"
    return "not disassembled"


# ---------------------------------------------------------------- kfold side

def parse_hex(v, what):
    if isinstance(v, str) and re.match(r"^0x[0-9a-fA-F]+$", v):
        return int(v, 16)
    raise Fail("kfold JSON: %s is not a \"0x...\" string: %r" % (what, v))


def kfold_side(doc):
    if not isinstance(doc, dict) or doc.get("schema") != "kfold-annotate":
        raise Fail("kfold JSON: schema is not kfold-annotate")
    funcs = {}
    for i, fn in enumerate(doc.get("functions", [])):
        dso = os.path.basename(fn.get("dso") or "")
        start = parse_hex(fn.get("start"), "functions[%d].start" % i)
        insns = {}
        for j, ins in enumerate(fn.get("instructions", [])):
            a = parse_hex(ins.get("addr"),
                          "functions[%d].instructions[%d].addr" % (i, j))
            if a in insns:
                raise Fail("kfold JSON: %s 0x%x lists 0x%x twice" %
                           (fn.get("symbol"), start, a))
            insns[a] = int(ins.get("samples", 0))
        key = (dso, start)
        if key in funcs:
            raise Fail("kfold JSON: two functions at %s 0x%x" % key)
        undecoded = sum(1 for ins in fn.get("instructions", [])
                        if (ins.get("text") or "").startswith(".byte"))
        funcs[key] = {"symbol": fn.get("symbol"), "kind": fn.get("kind"),
                      "total": int(fn.get("samples", 0)), "insns": insns,
                      "end": fn.get("end"), "dso_path": fn.get("dso"),
                      "no_code": fn.get("no_code"), "undecoded": undecoded}
    return {"functions": funcs, "event": doc.get("event"),
            "not_annotated": doc.get("not_annotated", [])}


def run_kfold(cmd, file):
    if not cmd:
        raise Fail("no kfold command after --")
    full = [cmd[0], "annotate", "--format", "json", "--top", "0"] + cmd[1:] + [file]
    p = subprocess.run(full, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        raise Fail("kfold exited %d: %s\n%s" % (
            p.returncode, " ".join(full), p.stderr.decode("utf-8", "replace")[-2000:]))
    try:
        return json.loads(p.stdout.decode("utf-8"))
    except ValueError as e:
        raise Fail("kfold printed no JSON: %s" % e)


# ---------------------------------------------------------------- compare

def read_allow(path):
    allow = {}
    if not path:
        return allow
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            w = line.split(None, 2)
            if len(w) < 3:
                raise Fail("%s:%d: want `DSO START REASON`" % (path, n))
            allow[(w[0], int(w[1], 16))] = w[2]
    return allow


def covered(p, key, kff):
    """A function only perf has (perf's _init stretched over .plt, say):
    kfold's functions inside perf's [start, stop) and, address by address,
    whether their counts are perf's.  An address of perf's with samples
    that no kfold instruction starts at is a difference; one without
    samples is not (kfold may not list padding)."""
    stop = p.get("stop")
    if stop is None:
        return [], []
    names, counts = [], {}
    for (dso, start), k in sorted(kff.items()):
        if dso == key[0] and key[1] <= start < stop:
            names.append("%s 0x%x" % (k["symbol"], start))
            for a, n in k["insns"].items():
                if key[1] <= a < stop:
                    counts[a] = n
    diffs = []
    for a in sorted(set(p["insns"]) | set(counts)):
        pn, kn = p["insns"].get(a), counts.get(a)
        if pn == kn or (kn is None and pn == 0):
            continue
        diffs.append("  0x%x: perf %s, kfold %s" % (
            a, "-" if pn is None else pn, "-" if kn is None else kn))
    return names, diffs


def compare(perf, kf, allow, out):
    pf, kff = perf["functions"], kf["functions"]
    st = {"functions": 0, "insns": 0, "equal": 0, "differing": 0,
          "perf_only": 0, "kfold_only": 0, "failed": 0, "allowed": 0}
    lines = []
    for key in sorted(pf):
        if key not in kff:
            continue
        p, k = pf[key], kff[key]
        st["functions"] += 1
        diffs = []
        addrs = set(p["insns"]) | set(k["insns"])
        if k.get("no_code"):
            # kfold gives per-address counts without code: compare the
            # addresses with samples; perf's others are not kfold's to list
            addrs = {a for a in addrs if p["insns"].get(a) or k["insns"].get(a)}
            lines.append("note %s 0x%x %s: kfold has no code (%s): %d sampled "
                         "addresses compared, %d zero-sample instructions of "
                         "perf's not" % (key[0], key[1], p["symbol"], k["no_code"],
                                         len(addrs), len(p["insns"]) - len(addrs)))
        if k.get("undecoded"):
            lines.append("note %s 0x%x %s: kfold printed %d instructions as "
                         "`.byte` (not decoded)" % (key[0], key[1], p["symbol"],
                                                    k["undecoded"]))
        for a in sorted(addrs):
            st["insns"] += 1
            pn, kn = p["insns"].get(a), k["insns"].get(a)
            if pn == kn:
                st["equal"] += 1
                continue
            st["differing"] += 1
            diffs.append("  0x%x: perf %s, kfold %s" % (
                a, "-" if pn is None else pn, "-" if kn is None else kn))
        if p["total"] != k["total"]:
            diffs.append("  total: perf %d, kfold %d" % (p["total"], k["total"]))
        if diffs:
            why = allow.get(key)
            tag = "ALLOWED (%s)" % why if why else "DIFF"
            st["allowed" if why else "failed"] += 1
            lines.append("%s %s 0x%x (perf: %s, kfold: %s):" % (
                tag, key[0], key[1], p["symbol"], k["symbol"]))
            lines.extend(diffs)
    na = {}
    for e in kf["not_annotated"]:
        b = os.path.basename(e.get("dso") or "")
        na.setdefault((b, e.get("symbol")), e)
        na.setdefault((b, None), e)
    for key in sorted(set(pf) - set(kff)):
        p = pf[key]
        st["perf_only"] += 1
        why = allow.get(key)
        reason = (na.get((key[0], p["symbol"])) or na.get((key[0], p["label"])) or
                  na.get((key[0], None)))
        extra = " (kfold: not annotated, %s)" % reason.get("reason") if reason else ""
        cover, cdiffs = covered(p, key, kff)
        if cover:
            extra += "; kfold has %s there: %d addresses compared, %d differ" % (
                ", ".join(cover), len(p["insns"]), len(cdiffs))
        if why and not cdiffs and cover:
            st["allowed"] += 1
            lines.append("ALLOWED (%s) perf-only %s 0x%x %s, %d samples%s" % (
                why, key[0], key[1], p["symbol"], p["total"], extra))
        else:
            st["failed"] += 1
            lines.append("DIFF perf-only %s 0x%x %s, %d samples%s%s" % (
                key[0], key[1], p["symbol"], p["total"], extra,
                " (allowed: %s, but kfold's samples there differ)" % why
                if why and cover else
                " (allowed: %s, but kfold has no function there)" % why if why else ""))
        lines.extend(cdiffs)
    for key in sorted(set(kff) - set(pf)):
        k = kff[key]
        st["kfold_only"] += 1
        lines.append("kfold-only %s 0x%x %s (%s), %d samples" % (
            key[0], key[1], k["symbol"], k["kind"], k["total"]))
    for e in perf["skipped"]:
        lines.append("perf skipped %s %s, %d samples: %s" % (
            e["dso"], e["symbol"], e["samples"], e["reason"]))
    for w in perf["warnings"]:
        lines.append("perf warning: " + w)
    for line in lines:
        print(line, file=out)
    return st


# ---------------------------------------------------------------- self-test

# Written by hand in the shape perf 6.1 prints (see the module docstring):
# two functions, inline markers, a file:line, a label in the middle, and a
# continuation line as --asm-raw would print it (never an instruction).
SELFTEST_PERF = """\
 Samples |\tSource code & Disassembly of prog for cpu-clock (7 samples, percent: local period)
-----------------------------------------------------------------------------------------
         :
         :
         :
         : 3    Disassembly of section .text:
         :
         : 5    0000000000001100 <hot>:
         : 6    hot():
       1 :   1100:   test   %esi,%esi
       0 :   1102:   movabs $0x1122334455667788,%r9
       0 :   1109:   11 22 33
         : 9    ./hot.c:12
       4 :   110c:   add    $0x1,%rdx
       2 :   1110:   ret
 Samples |\tSource code & Disassembly of prog for cpu-clock (3 samples, percent: local period)
-----------------------------------------------------------------------------------------
         :
         : 3    Disassembly of section .init:
         :
         : 5    0000000000001000 <_init>:
       1 :   1000:   sub    $0x8,%rsp
       0 :   1004:   ret
         :
         : 8    0000000000001020 <foo@plt>:
       2 :   1020:   jmp    *0x2fca(%rip)        # 4000 <foo@Base>
"""


def selftest():
    ok = True

    def check(cond, what):
        nonlocal ok
        print("%s %s" % ("ok  " if cond else "FAIL", what))
        ok = ok and cond

    secs, warns = parse_annotate(SELFTEST_PERF)
    check(len(secs) == 2, "two sections")
    hot, init = secs
    check((hot["dso"], hot["start"], hot["label"], hot["total"]) ==
          ("prog", 0x1100, "hot", 7), "first label gives the start")
    check(hot["insns"] == {0x1100: 1, 0x1102: 0, 0x110c: 4, 0x1110: 2},
          "instruction lines, the continuation line left out")
    check(len(warns) == 1 and "0x1109" in warns[0], "continuation line warned")
    check(init["start"] == 0x1000 and init["insns"][0x1020] == 2,
          "a later label does not move the start")

    perf = {"functions": {}, "skipped": [], "warnings": [], "events": {"cpu-clock"}}
    for sct, stop in zip(secs, (0x1111, 0x1030)):
        perf["functions"][(sct["dso"], sct["start"])] = {
            "symbol": sct["label"], "label": sct["label"], "total": sct["total"],
            "insns": sct["insns"], "stop": stop}
    plt = {"symbol": "foo@plt", "dso": "/x/prog", "kind": "user",
           "start": "0x1020", "end": "0x1030", "samples": 2,
           "instructions": [{"addr": "0x1020", "samples": 2}]}

    def kdoc(hot_insns, hot_total, init_fn=True, extra=()):
        fns = [{"symbol": "hot", "dso": "/x/prog", "kind": "user",
                "start": "0x1100", "end": "0x1111", "samples": hot_total,
                "instructions": [{"addr": hex(a), "samples": n}
                                 for a, n in hot_insns]}]
        if init_fn:
            fns.append({"symbol": "_init", "dso": "/x/prog", "kind": "user",
                        "start": "0x1000", "end": "0x1005", "samples": 1,
                        "instructions": [{"addr": "0x1000", "samples": 1},
                                         {"addr": "0x1004", "samples": 0}]})
        fns.extend(extra)
        return kfold_side({"schema": "kfold-annotate", "version": 1,
                           "event": "cpu-clock", "functions": fns,
                           "not_annotated": [{"symbol": "_init", "dso": "/x/prog",
                                              "samples": 3, "reason": "test"}]})

    class Sink:
        def __init__(self):
            self.text = ""

        def write(self, t):
            self.text += t

    good = [(0x1100, 1), (0x1102, 0), (0x110c, 4), (0x1110, 2)]
    out = Sink()
    st = compare(perf, kdoc(good, 7, init_fn=False), {}, out)
    check(st["functions"] == 1 and st["insns"] == 4 and st["equal"] == 4 and
          st["perf_only"] == 1 and st["failed"] == 1,
          "equal function; perf-only _init fails")
    check("kfold: not annotated, test" in out.text, "perf-only shows kfold's reason")

    out = Sink()
    st = compare(perf, kdoc(good, 7, init_fn=False), {("prog", 0x1000): "end fix-up"}, out)
    check(st["failed"] == 1 and "kfold has no function there" in out.text,
          "--allow does not excuse samples kfold does not have")

    out = Sink()
    st = compare(perf, kdoc(good, 7, init_fn=False, extra=[plt]),
                 {("prog", 0x1000): "end fix-up"}, out)
    check(st["failed"] == 1 and "0x1000: perf 1, kfold -" in out.text,
          "--allow: perf's 0x1000 sample is in no kfold function")

    out = Sink()
    st = compare(perf, kdoc(good, 7), {}, out)
    check(st["functions"] == 2 and st["failed"] == 1 and
          "0x1020: perf 2, kfold -" in out.text and "total: perf 3, kfold 1" in out.text,
          "_init: an address only perf has, and the totals")

    # the allowed case: perf's _init [0x1000, 0x1030) with its samples all
    # in foo@plt, kfold's function at 0x1020
    kf = kdoc(good, 7, init_fn=False, extra=[plt])
    out = Sink()
    perf2 = dict(perf, functions=dict(perf["functions"]))
    perf2["functions"][("prog", 0x1000)] = dict(perf["functions"][("prog", 0x1000)],
                                                insns={0x1000: 0, 0x1004: 0, 0x1020: 2},
                                                total=2)
    st = compare(perf2, kf, {("prog", 0x1000): "end fix-up"}, out)
    check(st["failed"] == 0 and st["allowed"] == 1 and "3 addresses compared, 0 differ" in out.text,
          "--allow excuses _init when foo@plt has perf's samples")

    bad = [(0x1100, 1), (0x1102, 1), (0x110c, 3), (0x1110, 2)]
    out = Sink()
    st = compare(perf2, kdoc(bad, 7, init_fn=False, extra=[plt]), {("prog", 0x1000): "x"}, out)
    check(st["differing"] == 2 and st["failed"] == 1 and
          "0x1102: perf 0, kfold 1" in out.text and "0x110c: perf 4, kfold 3" in out.text,
          "count differences listed with both counts")

    out = Sink()
    extra = [{"symbol": "k", "dso": "[kernel.kallsyms]", "kind": "kernel",
              "start": "0xffffffff81000000", "samples": 5, "instructions": []}]
    st = compare(perf2, kdoc(good, 7, init_fn=False, extra=extra + [plt]),
                 {("prog", 0x1000): "x"}, out)
    check(st["kfold_only"] == 2 and st["failed"] == 0, "kfold-only does not fail")

    for start in (4096, "4096"):
        try:
            kfold_side({"schema": "kfold-annotate", "functions": [
                {"dso": "a", "start": start, "instructions": []}]})
            check(False, "start %r refused" % (start,))
        except Fail:
            check(True, "start %r refused" % (start,))
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--selftest"]:
        return selftest()
    ap = argparse.ArgumentParser(
        description="compare kfold annotate with perf annotate",
        usage="%(prog)s [options] perf.data [-- KFOLD [KFOLD-OPTIONS...]]")
    ap.add_argument("file", help="the capture")
    ap.add_argument("kfold", nargs=argparse.REMAINDER,
                    help="the kfold command and its options (after --)")
    ap.add_argument("--symfs", help="perf's --symfs")
    ap.add_argument("--kallsyms", help="kallsyms for perf report (names of "
                    "the skipped kernel functions only)")
    ap.add_argument("--perf", default="perf", help="the perf binary")
    ap.add_argument("--allow", help="file of `DSO START REASON` lines")
    ap.add_argument("--kfold-json", help="read kfold's JSON from this file "
                    "instead of running kfold")
    ap.add_argument("--perf-only", action="store_true",
                    help="print perf's side as JSON and stop")
    ap.add_argument("--name", help="a name for the summary line")
    args = ap.parse_args()
    if args.kfold and args.kfold[0] == "--":
        args.kfold = args.kfold[1:]
    name = args.name or args.file
    try:
        allow = read_allow(args.allow)
        kf = None
        if args.perf_only:
            pass
        elif args.kfold_json:
            with open(args.kfold_json) as f:
                kf = kfold_side(json.load(f))
        else:
            kf = kfold_side(run_kfold(args.kfold, args.file))
        with tempfile.TemporaryDirectory(prefix="kfold-annot-oracle.") as tmp:
            perf = perf_side(args, tmp, kf["event"] if kf and kf["event"] else None)
        if args.perf_only:
            doc = {"%s %s" % (k[0], hex(k[1])): {
                       "symbol": f["symbol"], "total": f["total"],
                       "stop": hex(f["stop"]) if f["stop"] is not None else None,
                       "insns": {hex(a): n for a, n in sorted(f["insns"].items())}}
                   for k, f in sorted(perf["functions"].items())}
            json.dump({"functions": doc, "skipped": perf["skipped"],
                       "warnings": perf["warnings"]}, sys.stdout, indent=1)
            print()
            return 0
        ev = kf["event"]
        if ev and perf["all_events"] and not perf["events"]:
            raise Fail("kfold annotated event %s, perf %s" %
                       (ev, ", ".join(sorted(perf["all_events"]))))
        st = compare(perf, kf, allow, sys.stdout)
    except (Fail, OSError) as e:
        print("annotate-oracle: %s: %s" % (name, e), file=sys.stderr)
        return 2
    skipped = sum(e["samples"] for e in perf["skipped"])
    print("%s: %d functions compared, %d instructions compared, %d equal, "
          "%d differing; %d perf-only, %d kfold-only functions; "
          "perf skipped %d functions (%d samples)%s" % (
              name, st["functions"], st["insns"], st["equal"], st["differing"],
              st["perf_only"], st["kfold_only"], len(perf["skipped"]), skipped,
              "; %d allowed" % st["allowed"] if st["allowed"] else ""))
    return 1 if st["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
