#!/usr/bin/env python3
# kinline.py KFOLD SRCDIR: kernel frames expanded into their inline chains
# from a vmlinux with DWARF (issue 4), checked against addr2line.
#
# No real vmlinux with DWARF exists on the test machines, so the test
# builds one: testdata/src/kvmlinux/kvm.c, freestanding, linked at the
# kernel's address with _text at its start (kvm.lds) and a build-id.
# scripts/make-kernel-capture.py then writes a capture of samples in it,
# booted with a KASLR offset, with its build-id recorded for
# [kernel.kallsyms]; the kallsyms given is that boot's (the image's
# function symbols, moved by the offset).  Every instruction of the
# image's functions is the leaf of one sample, under return addresses
# taken from its call instructions.  The expected stacks come from
# `addr2line -i -f -e IMAGE` at each frame's link address (return
# addresses at ra - 1), reversed (outermost first), and, without DWARF,
# from the image's function symbols: kfold's own lookups are never the
# oracle.
#
# Shown:
#  a. --vmlinux IMG: each frame is addr2line's inline chain (also with
#     --kernel: "_[k]" on every link of the chain);
#  b. --no-inline: the kallsyms names;
#  c. a vmlinux with another build-id: refused with a warning naming the
#     file and both build-ids, names stay kallsyms';
#  d. no --vmlinux: found by build-id under --symfs at
#     usr/lib/debug/.build-id/xx/rest.debug (a debug file made by
#     objcopy --only-keep-debug, as distributions ship it), at
#     usr/lib/debug/boot/vmlinux-RELEASE, and in a build-id cache
#     (--buildid-dir, .build-id/xx/rest/elf);
#  e. --srcline: each frame's :file:line is addr2line's;
#  f. --stats: where the kernel's debug info came from, or the hint;
#  g. a capture without build-ids: --vmlinux is used with a warning, and
#     nothing is searched for;
#  h. a kernel map that names no reference symbol ("[kernel.kallsyms]"):
#     the KASLR offset comes from kallsyms instead;
#  i. a --vmlinux that is not ELF or is truncated: a warning, exit status
#     0, the kallsyms names; one with damaged DWARF: exit status 0 and
#     well-formed stacks (no crash: the sanitizer build runs this too);
#  k. kfold archive --vmlinux IMG: the bundle leaves the image out unless
#     --with-vmlinux (its stacks are then those of a run without it, and
#     the manifest says it was withheld); with it, the bundle's stacks are
#     a.'s;
#  j. kfold annotate --vmlinux IMG: the kernel's functions disassembled
#     from the image (at their run-time addresses, KASLR offset added), at
#     objdump's instruction addresses, each sampled leaf with its one
#     sample and period, and addr2line's inline chain at every leaf; and
#     without --vmlinux, per-address counts and "no vmlinux".
import os
import re
import shutil
import subprocess
import sys
import tempfile

KASLR = 0x1e000000
RELEASE = "6.1.0-kfold-test"
OTHER_BID = "0123456789abcdef0123456789abcdef01234567"

kfold, src = sys.argv[1], sys.argv[2]
for tool in ("gcc", "addr2line", "objdump", "readelf", "objcopy"):
    if not shutil.which(tool):
        print("SKIP: %s not found" % tool)
        sys.exit(77)
tmp = tempfile.mkdtemp()
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ktestlib import a2l_chains, build_id, build_vmlinux, check, run  # noqa: E402
import ktestlib  # noqa: E402


def build(out, bid):
    build_vmlinux(src, out, bid)


img = os.path.join(tmp, "vmlinux")
other = os.path.join(tmp, "vmlinux-other")
build(img, "sha1")
build(other, "0x" + OTHER_BID)
bid = build_id(img)
assert bid != OTHER_BID

# the image's functions (STT_FUNC: the names kallsyms would list)
funcs = []
for line in run("readelf", "-sW", img).stdout.splitlines():
    f = line.split()
    if len(f) >= 8 and f[3] == "FUNC":
        funcs.append((int(f[1], 16), int(f[2]), f[7]))
funcs.sort()

# instructions: leaves (not the padding between functions) and return
# addresses (after each call)
leaves, ras = [], []
insns = []
for line in run("objdump", "-d", "--no-show-raw-insn", "-j", ".text", img).stdout.splitlines():
    m = re.match(r"^\s*([0-9a-f]+):\s+(\S+)", line)
    if m:
        insns.append((int(m.group(1), 16), m.group(2)))
for i, (a, mn) in enumerate(insns):
    if mn.startswith(("nop", "xchg", "cs", "data16", "int3")):
        continue
    leaves.append(a)
    if mn.startswith("call") and i + 1 < len(insns):
        ras.append(insns[i + 1][0])
check("the image has instructions and calls (%d, %d)" % (len(leaves), len(ras)),
      len(leaves) > 20 and len(ras) >= 3)

# samples: leaf i under two return addresses; distinct periods
samples = []
for i, a in enumerate(leaves):
    samples.append((1000 * (i + 1), [a, ras[i % len(ras)], ras[(i + 1) % len(ras)]]))
chains = os.path.join(tmp, "chains")
with open(chains, "w") as f:
    for period, addrs in samples:
        f.write("%d %s\n" % (period, " ".join("%x" % a for a in addrs)))


def capture(name, *extra):
    out = os.path.join(tmp, name)
    r = run(sys.executable, os.path.join(src, "scripts", "make-kernel-capture.py"),
            "--vmlinux", img, "--kaslr", hex(KASLR), "--release", RELEASE,
            *extra, chains, out)
    if r.returncode:
        print("FAIL: make-kernel-capture.py: " + r.stderr)
        sys.exit(1)
    return out


data = capture("perf.data")
data_nobid = capture("nobid.data", "--no-build-id")
data_noref = capture("noref.data", "--kernel-map-name", "[kernel.kallsyms]")
kallsyms = os.path.join(tmp, "kallsyms")
with open(kallsyms, "w") as f:
    f.write("%016x T _text\n" % (funcs[0][0] + KASLR))
    for a, _size, name in funcs:
        f.write("%016x T %s\n" % (a + KASLR, name))

# the oracle: addr2line at each lookup address (link-time)
lookups = sorted({a for _p, ch in samples for a in [ch[0]] + [r - 1 for r in ch[1:]]})
oracle = a2l_chains(["-e", img], lookups)


def kallsyms_name(a):
    best = None
    for start, _size, name in funcs:
        if start <= a:
            best = name
    return best


def expected(mode, suffix=""):
    """folded lines: mode "inline", "srcline" or "syms" """
    tot = {}
    for period, ch in samples:
        frames = []
        for k, a in enumerate(reversed(ch)):     # outermost first
            at = a if k == len(ch) - 1 else a - 1
            o = oracle[at]
            if mode == "syms" or o[0][0] == "??":
                frames.append(kallsyms_name(at) + suffix)
            elif mode == "inline":
                frames += [n + suffix for n, _loc in reversed(o)]
            else:
                frames += [n + ":" + loc + suffix for n, loc in reversed(o)]
        key = "kworker;" + ";".join(frames)
        tot[key] = tot.get(key, 0) + period
    return sorted("%s %d" % kv for kv in tot.items())


def kf(*args, data_file=data):
    r = run(kfold, "--kallsyms", kallsyms, "--buildid-dir", os.path.join(tmp, "nocache"),
            *args, data_file)
    return r.returncode, sorted(r.stdout.splitlines()), r.stderr


def same(name, got, want):
    if got == want:
        check(name, True)
        return
    g, w = set(got), set(want)
    detail = "%d lines, want %d\n" % (len(got), len(want))
    detail += "".join("    want %s\n" % l for l in sorted(w - g)[:4])
    detail += "".join("    got  %s\n" % l for l in sorted(g - w)[:4])
    check(name, False, detail)


want_inline = expected("inline")
want_syms = expected("syms")
depth = max(len(v) for v in oracle.values())
check("the oracle has inline chains (deepest %d) and they change the stacks" % depth,
      depth >= 4 and want_inline != want_syms)

# a. --vmlinux
rc, out, err = kf("--vmlinux", img)
same("a. --vmlinux: every frame is addr2line's inline chain (%d stacks)" % len(out),
     out, want_inline)
check("a. no warning with a matching vmlinux", rc == 0 and err == "", err)
rc, out, err = kf("--vmlinux", img, "--kernel")
same("a. --kernel marks every link of a kernel chain", out, expected("inline", "_[k]"))

# b. --no-inline
rc, out, err = kf("--vmlinux", img, "--no-inline")
same("b. --no-inline: kallsyms names", out, want_syms)

# c. another build-id
rc, out, err = kf("--vmlinux", other)
same("c. a vmlinux with another build-id is not used", out, want_syms)
check("c. the warning names the file and both build-ids",
      other in err and bid in err and OTHER_BID in err, err)

# d. found by build-id
symfs = os.path.join(tmp, "symfs")
dbg = os.path.join(symfs, "usr/lib/debug/.build-id", bid[:2], bid[2:] + ".debug")
os.makedirs(os.path.dirname(dbg))
subprocess.run(["objcopy", "--only-keep-debug", img, dbg], check=True)
rc, out, err = kf("--symfs", symfs)
same("d. found under --symfs at usr/lib/debug/.build-id/%s/%s.debug" % (bid[:2], bid[2:]),
     out, want_inline)
symfs2 = os.path.join(tmp, "symfs2")
boot = os.path.join(symfs2, "usr/lib/debug/boot/vmlinux-" + RELEASE)
os.makedirs(os.path.dirname(boot))
shutil.copy(img, boot)
rc, out, err = kf("--symfs", symfs2)
same("d. found under --symfs at usr/lib/debug/boot/vmlinux-RELEASE", out, want_inline)
cache = os.path.join(tmp, "cache")
os.makedirs(os.path.join(cache, "vmlinux", bid))
shutil.copy(img, os.path.join(cache, "vmlinux", bid, "elf"))
os.makedirs(os.path.join(cache, ".build-id", bid[:2]))
os.symlink(os.path.join("..", "..", "vmlinux", bid), os.path.join(cache, ".build-id", bid[:2], bid[2:]))
r = run(kfold, "--kallsyms", kallsyms, "--buildid-dir", cache, data)
same("d. found in the build-id cache (.build-id/xx/rest/elf)",
     sorted(r.stdout.splitlines()), want_inline)
symfs3 = os.path.join(tmp, "symfs3")
wrong = os.path.join(symfs3, "usr/lib/debug/boot/vmlinux-" + RELEASE)
os.makedirs(os.path.dirname(wrong))
shutil.copy(other, wrong)
rc, out, err = kf("--symfs", symfs3, "--stats")
same("d. a file in a searched place with another build-id is not used", out, want_syms)

# e. --srcline
rc, out, err = kf("--vmlinux", img, "--srcline")
same("e. --srcline: each frame's :file:line is addr2line's", out, expected("srcline"))

# f. --stats
rc, out, err = kf("--vmlinux", img, "--stats")
check("f. --stats names the kernel's debug info file",
      "debug info (inline frames, lines) from " + img in err, err)
rc, out, err = kf("--symfs", symfs3, "--stats")
check("f. --stats: no vmlinux found, with a hint naming the package",
      "no vmlinux with DWARF found for build-id " + bid in err and
      "--vmlinux" in err and "linux-image-%s-dbg" % RELEASE in err and
      "another build-id" in err, err)

# g. no build-id recorded
rc, out, err = kf("--vmlinux", img, data_file=data_nobid)
same("g. no build-id recorded: --vmlinux is used", out, want_inline)
check("g. ... with a warning that it is unchecked", "unchecked" in err, err)
rc, out, err = kf("--symfs", symfs, "--stats", data_file=data_nobid)
same("g. no build-id recorded: nothing is looked for", out, want_syms)
check("g. ... and --stats says why", "records no kernel build-id" in err, err)

# h. no reference symbol in the kernel map
rc, out, err = kf("--vmlinux", img, data_file=data_noref)
same("h. no reference symbol in the kernel map: KASLR offset from kallsyms",
     out, want_inline)

# i. hostile files
notelf = os.path.join(tmp, "notelf")
with open(notelf, "w") as f:
    f.write("this is not a kernel\n")
with open(img, "rb") as f:
    raw = f.read()
hostile = [("not ELF", notelf)]
for n in (16, 64, 200, len(raw) // 3, len(raw) // 2, len(raw) - 64, len(raw) - 1):
    p = os.path.join(tmp, "cut%d" % n)
    with open(p, "wb") as f:
        f.write(raw[:n])
    hostile.append(("cut at %d of %d bytes" % (n, len(raw)), p))
for name, p in hostile:
    rc, out, err = kf("--vmlinux", p)
    same("i. %s: kallsyms names" % name, out, want_syms)
    check("i. %s: exit 0 and a warning naming the file" % name,
          rc == 0 and ("--vmlinux " + p) in err, "rc %d, %s" % (rc, err))
# damaged DWARF: bytes of .debug_info/.debug_line/.debug_abbrev overwritten;
# anything may come out, but no crash and exit status 0
secs = {}
for line in run("readelf", "-SW", img).stdout.splitlines():
    m = re.match(r"^\s*\[\s*\d+\]\s+(\S+)\s+\S+\s+[0-9a-f]+\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
    if m:
        secs[m.group(1)] = (int(m.group(2), 16), int(m.group(3), 16))
bad = 0
seed = 12345
for sec in (".debug_info", ".debug_abbrev", ".debug_line", ".debug_str"):
    if sec not in secs:
        continue
    off, size = secs[sec]
    for k in range(8):
        b = bytearray(raw)
        for _ in range(1 + k):
            seed = (seed * 1103515245 + 12345) & 0x7fffffff
            b[off + seed % size] ^= 1 << (seed % 8)
        p = os.path.join(tmp, "flip")
        with open(p, "wb") as f:
            f.write(b)
        for extra in ([], ["--srcline"]):
            rc, out, err = kf("--vmlinux", p, *extra)
            if rc != 0 or len(out) == 0 or \
                    not all(re.match(r"^kworker;[^\n]* \d+$", l) for l in out):
                bad += 1
                if bad <= 3:
                    print("  %s flip %d %s: rc %d\n%s" % (sec, k, extra, rc, err[-2000:]))
check("i. damaged DWARF: exit 0, well-formed stacks, no crash", bad == 0,
      "%d runs failed" % bad)

# j. annotate
import json
period_of = {ch[0]: p for p, ch in samples}
r = run(kfold, "annotate", "--kallsyms", kallsyms, "--buildid-dir", os.path.join(tmp, "nocache"),
        "--vmlinux", img, "--format", "json", "--top", "0", data)
bad = []
if r.returncode != 0:
    bad.append("exit %d: %s" % (r.returncode, r.stderr[-500:]))
else:
    doc = json.loads(r.stdout)
    objdump_at = {a for a, _mn in insns}
    for f in doc["functions"]:
        if f["kind"] != "kernel" or f["no_code"] or f["code_from"] != img:
            bad.append("%s: no code from the image (%s)" % (f["symbol"], f["no_code"]))
            continue
        for i in f["instructions"]:
            link = int(i["addr"], 16) - KASLR
            if link not in objdump_at:
                bad.append("%s: %#x is no instruction of objdump's" % (f["symbol"], link))
            want = 1 if link in period_of else 0
            if i["samples"] != want or (want and i["period"] != period_of[link]):
                bad.append("%s: %#x has %d samples, period %d" % (f["symbol"], link, i["samples"], i["period"]))
            if want and oracle[link][0][0] != "??":
                chain = [l["function"] for l in i["inline"]]
                if chain != [fn for fn, _loc in reversed(oracle[link])]:
                    bad.append("%s: %#x chain %s, addr2line %s" % (f["symbol"], link, chain, oracle[link]))
    covered = sum(i["samples"] for f in doc["functions"] for i in f["instructions"])
    if covered != len(samples):
        bad.append("%d of %d samples annotated" % (covered, len(samples)))
check("j. annotate --vmlinux: code from the image, objdump's addresses, every sample, addr2line's chains",
      not bad, "\n".join(bad[:5]))
r = run(kfold, "annotate", "--kallsyms", kallsyms, "--buildid-dir", os.path.join(tmp, "nocache"),
        "--format", "json", "--top", "0", data)
ok = r.returncode == 0
if ok:
    doc = json.loads(r.stdout)
    ok = doc["functions"] and all(f["no_code"] and "vmlinux" in f["no_code"] and
                                  all(i["size"] == 0 for i in f["instructions"])
                                  for f in doc["functions"])
check("j. annotate without vmlinux: per-address counts, and why there is no code", ok)

# k. archive
import tarfile
rc, want_novm, _err = kf()
for extra, want, label in (([], want_novm, "without --with-vmlinux: the image left out"),
                           (["--with-vmlinux"], want_inline, "--with-vmlinux: a.'s inline chains")):
    bundle = os.path.join(tmp, "k%d.tar.zst" % len(extra))
    r = run(kfold, "archive", "-q", "--kallsyms", kallsyms, "--buildid-dir",
            os.path.join(tmp, "nocache"), "--vmlinux", img, *extra, data, "-o", bundle)
    if r.returncode != 0:
        check("k. archive " + label, False, r.stderr[-400:])
        continue
    r2 = run(kfold, bundle)
    same("k. archive " + label, sorted(r2.stdout.splitlines()), want)
    man = json.loads(subprocess.run(["tar", "--zstd", "-xOf", bundle, "manifest.json"],
                                    capture_output=True).stdout)
    withheld = [o for o in man["opens"] if o.get("withheld")]
    check("k. the manifest says the image was %s" % ("included" if extra else "withheld"),
          bool(withheld) != bool(extra), json.dumps(withheld)[:300])

shutil.rmtree(tmp)
sys.exit(1 if ktestlib.fails else 0)
